/**
 * SiiSession: the client's calls on behalf of one certificate, with the token handled: each call
 * takes a cached token (or logs in), and when the SII refuses it, drops it and retries once
 * (`SiiClient.withToken`). This is how services should call the SII; the token-taking methods of
 * SiiClient stay for callers that manage tokens themselves.
 */
import type { SigningCredential } from '@dte/engine';

import type { SiiClient } from './client';
import type { FolioRequest } from './folios';
import type { RcvQuery, RcvRegistro } from './rcv';
import type { AccionDoc, RegisterAnswer, RegisterDocRef, RegisterHistory } from './register';
import type { DocumentStatus, DocumentStatusQuery, UploadStatus, UploadStatusQuery } from './status';
import type { CallOptions } from './transport';
import type { UploadEnvioInput, UploadOutcome } from './upload';

type WithoutToken<T> = Omit<T, 'token'>;

export class SiiSession {
  constructor(
    readonly client: SiiClient,
    readonly credential: SigningCredential,
  ) {}

  /**
   * DTEUpload; rutSender defaults to the certificate owner; STATUS 5 renews the token once. A
   * failed login throws its SiiError (nothing was uploaded); every DTEUpload answer is an outcome.
   */
  uploadEnvio(
    input: Omit<UploadEnvioInput, 'token' | 'rutSender'> & { rutSender?: string },
  ): Promise<UploadOutcome> {
    return this.client.sendEnvio({ ...input, credential: this.credential });
  }

  queryUploadStatus(q: WithoutToken<UploadStatusQuery>): Promise<UploadStatus> {
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.queryUploadStatus({ ...q, token }),
      callOpts(q),
    );
  }

  /** rutConsultante defaults to the certificate owner */
  queryDocumentStatus(
    q: Omit<WithoutToken<DocumentStatusQuery>, 'rutConsultante'> & { rutConsultante?: string },
  ): Promise<DocumentStatus> {
    const rutConsultante = q.rutConsultante ?? this.credential.info.rut;
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.queryDocumentStatus({ ...q, rutConsultante, token }),
      callOpts(q),
    );
  }

  ingresarAceptacionReclamoDoc(
    q: WithoutToken<RegisterDocRef> & { accionDoc: AccionDoc },
  ): Promise<RegisterAnswer> {
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.ingresarAceptacionReclamoDoc({ ...q, token }),
      callOpts(q),
    );
  }

  listarEventosHistDoc(q: WithoutToken<RegisterDocRef>): Promise<RegisterHistory> {
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.listarEventosHistDoc({ ...q, token }),
      callOpts(q),
    );
  }

  consultarDocDteCedible(q: WithoutToken<RegisterDocRef>): Promise<RegisterAnswer> {
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.consultarDocDteCedible({ ...q, token }),
      callOpts(q),
    );
  }

  consultarFechaRecepcionSii(q: WithoutToken<RegisterDocRef>): Promise<string> {
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.consultarFechaRecepcionSii({ ...q, token }),
      callOpts(q),
    );
  }

  /**
   * A folio grant for `rutCompany` with this certificate's token (renewed once on HTTP 401):
   * resolves to the CAF XML text. A failed login throws its SiiError (nothing was asked).
   */
  requestFolios(q: WithoutToken<FolioRequest>): Promise<string> {
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.requestFolios({ ...q, token }),
      callOpts(q),
    );
  }

  /** One side of the RCV with this certificate's token (renewed once on HTTP 401). */
  readRcv(q: WithoutToken<RcvQuery>): Promise<RcvRegistro> {
    return this.client.withToken(
      q.env,
      this.credential,
      (token) => this.client.readRcv({ ...q, token }),
      callOpts(q),
    );
  }
}

export function callOpts(o: CallOptions): CallOptions {
  return {
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
  };
}
