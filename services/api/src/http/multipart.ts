import Busboy from 'busboy';
import type { Context } from 'koa';
import { ApiError } from '@dte/error-catalog';

export interface UploadedFile {
  filename: string;
  mimeType: string;
  data: Buffer;
}

export interface MultipartBody {
  fields: Record<string, string>;
  files: Record<string, UploadedFile>;
}

export const MAX_UPLOAD_BYTES = 2 * 1024 * 1024;

/**
 * Reads a multipart/form-data body into memory (uploads here are small: a .p12 or a CAF XML).
 * Anything that is not a readable multipart body — another content type, a truncated stream, a
 * file over the limit — is `invalidCode` (cert.invalid_request or caf.invalid_request).
 */
export async function parseMultipart(ctx: Context, invalidCode: string): Promise<MultipartBody> {
  if (!ctx.is('multipart/form-data')) {
    throw new ApiError(invalidCode, 'The body must be multipart/form-data.');
  }
  return new Promise<MultipartBody>((resolve, reject) => {
    const out: MultipartBody = { fields: {}, files: {} };
    let failed = false;
    const fail = (message: string) => {
      if (failed) return;
      failed = true;
      ctx.req.unpipe();
      ctx.req.resume();
      reject(new ApiError(invalidCode, message));
    };
    let bb: Busboy.Busboy;
    try {
      bb = Busboy({ headers: ctx.req.headers, limits: { fileSize: MAX_UPLOAD_BYTES, files: 4, fields: 20 } });
    } catch (err) {
      fail(`Unreadable multipart body: ${(err as Error).message}`);
      return;
    }
    bb.on('field', (name, value) => {
      // a text field is stored as text: PostgreSQL refuses U+0000 in text (22021), so it is the
      // caller's error here, never a 500 at the INSERT
      if (value.includes('\u0000')) return fail(`Field "${name}" contains a NUL character.`);
      out.fields[name] = value;
    });
    bb.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => fail(`File "${name}" is larger than ${MAX_UPLOAD_BYTES} bytes.`));
      stream.on('end', () => {
        out.files[name] = {
          filename: info.filename ?? '',
          mimeType: info.mimeType,
          data: Buffer.concat(chunks),
        };
      });
    });
    bb.on('error', (err: Error) => fail(`Unreadable multipart body: ${err.message}`));
    bb.on('close', () => {
      if (!failed) resolve(out);
    });
    ctx.req.pipe(bb);
  });
}
