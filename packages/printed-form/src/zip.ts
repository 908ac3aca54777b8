import yazl from 'yazl';

/** A ZIP of named files (yazl, deflate), in the order given. */
export function zipFiles(files: { name: string; data: Buffer }[], mtime = new Date(0)): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const f of files)
    zip.addBuffer(f.data, f.name, { mtime: mtime.getTime() > 0 ? mtime : new Date(1980, 0, 1) });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}
