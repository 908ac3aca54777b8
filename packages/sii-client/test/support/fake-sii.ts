/**
 * A tiny local HTTP server that answers like the SII with recorded-shape replies, to test the
 * client's requests and its reading of good, bad and broken answers. Each path has a queue of
 * scripted answers (the last one repeats); every request is recorded with its raw body.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Scripted =
  | { status?: number; contentType?: string; body: string | Buffer }
  | { drop: true }
  /** send the headers and part of the body, then cut the connection */
  | { partial: string }
  | { delayMs: number; then: Scripted };

export interface Recorded {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** header names in the order they were sent */
  rawHeaderNames: string[];
  body: Buffer;
}

export class FakeSii {
  readonly requests: Recorded[] = [];
  private readonly scripts = new Map<string, Scripted[]>();
  private server!: http.Server;
  url = '';

  /** answers for a path, in order; the last one repeats */
  on(path: string, ...answers: Scripted[]): this {
    this.scripts.set(path, answers);
    return this;
  }

  requestsTo(path: string): Recorded[] {
    return this.requests.filter((r) => r.path === path);
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = (req.url ?? '').split('?')[0] ?? '';
        this.requests.push({
          method: req.method ?? '',
          path,
          headers: req.headers,
          rawHeaderNames: req.rawHeaders.filter((_, i) => i % 2 === 0),
          body: Buffer.concat(chunks),
        });
        const queue = this.scripts.get(path);
        const answer = queue && (queue.length > 1 ? queue.shift()! : queue[0]);
        if (!answer) {
          res.writeHead(404, { 'content-type': 'text/plain' }).end('not scripted');
          return;
        }
        void this.play(answer, req, res);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  private async play(a: Scripted, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if ('delayMs' in a) {
      await new Promise((r) => setTimeout(r, a.delayMs));
      if (res.destroyed) return;
      return this.play(a.then, req, res);
    }
    if ('drop' in a) {
      req.socket.destroy();
      return;
    }
    if ('partial' in a) {
      res.writeHead(200, { 'content-type': 'text/xml', 'content-length': String(a.partial.length * 3) });
      res.write(a.partial, () => setTimeout(() => req.socket.destroy(), 20));
      return;
    }
    res.writeHead(a.status ?? 200, { 'content-type': a.contentType ?? 'text/xml; charset=UTF-8' });
    res.end(a.body);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** An Axis RPC reply as the SII writes it: the SII:RESPUESTA escaped inside `<method>Return`. */
export function rpcReply(method: string, ns: string, respuesta: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" ' +
    'xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n' +
    ' <soapenv:Body>\n' +
    `  <ns1:${method}Response soapenv:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/" xmlns:ns1="${ns}">\n` +
    `   <${method}Return xsi:type="xsd:string">${escapeXml(respuesta)}</${method}Return>\n` +
    `  </ns1:${method}Response>\n </soapenv:Body>\n</soapenv:Envelope>`
  );
}

export function respuesta(hdr: string, body = ''): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema">' +
    (body ? `<SII:RESP_BODY>${body}</SII:RESP_BODY>` : '') +
    `<SII:RESP_HDR>${hdr}</SII:RESP_HDR></SII:RESPUESTA>`
  );
}

/** The register WS's document/literal reply. */
export function registerReply(method: string, inner: string): string {
  return (
    '<?xml version="1.0" ?><S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body>' +
    `<ns2:${method}Response xmlns:ns2="http://ws.registroreclamodte.diii.sdi.sii.cl"><return>${inner}</return>` +
    `</ns2:${method}Response></S:Body></S:Envelope>`
  );
}

export function soapFault(code: string, text: string): string {
  return (
    '<?xml version="1.0" ?><S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><S:Fault>' +
    `<faultcode>${code}</faultcode><faultstring>${escapeXml(text)}</faultstring></S:Fault></S:Body></S:Envelope>`
  );
}

export function recepcion(fields: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<RECEPCIONDTE>\n${fields}\n</RECEPCIONDTE>\n`;
}
