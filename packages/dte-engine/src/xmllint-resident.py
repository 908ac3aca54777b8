"""
A resident `xmllint --noout --nonet --schema <xsd> -`: the same libxml2 (libxml2.so.2, the library
the xmllint binary of libxml2-utils links), called through ctypes, with each schema compiled once
and kept, instead of one xmllint process per file that parses and compiles the SII's XSDs again.
Used by schema.ts (engine 'resident'); Python's standard library only.

It does what xmllint 2.9 does for those options: the default error handlers (so every message is
xmllint's, byte for byte: they are captured from file descriptor 2), parse options COMPACT,
BIG_LINES and NONET, the no-network entity loader, the document read as a stream named "-", a
new validation context per file; and it answers xmllint's exit code: 0 valid, 1 not well-formed, 3 invalid,
5 the schema did not compile. "- validates" / "- fails to validate" are written as xmllint does.

Protocol (binary, one request at a time, answered in order):
  stdin:  "<schema path> <n>\\n" then n bytes of the file
  stdout: "<exit code> <m>\\n" then m bytes: what xmllint would have written to stderr
"""
import ctypes
import ctypes.util
import os
import sys
import tempfile

XML_PARSE_NONET = 1 << 11
XML_PARSE_COMPACT = 1 << 16
XML_PARSE_BIG_LINES = 1 << 22
OPTIONS = XML_PARSE_COMPACT | XML_PARSE_BIG_LINES | XML_PARSE_NONET

lib = ctypes.CDLL(ctypes.util.find_library("xml2") or "libxml2.so.2")
lib.xmlSchemaNewParserCtxt.restype = ctypes.c_void_p
lib.xmlSchemaNewParserCtxt.argtypes = [ctypes.c_char_p]
lib.xmlSchemaParse.restype = ctypes.c_void_p
lib.xmlSchemaParse.argtypes = [ctypes.c_void_p]
lib.xmlSchemaFreeParserCtxt.argtypes = [ctypes.c_void_p]
lib.xmlSchemaNewValidCtxt.restype = ctypes.c_void_p
lib.xmlSchemaNewValidCtxt.argtypes = [ctypes.c_void_p]
lib.xmlSchemaFreeValidCtxt.argtypes = [ctypes.c_void_p]
lib.xmlSchemaValidateDoc.restype = ctypes.c_int
lib.xmlSchemaValidateDoc.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
READ = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_char), ctypes.c_int)
CLOSE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
lib.xmlReadIO.restype = ctypes.c_void_p
lib.xmlReadIO.argtypes = [READ, CLOSE, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
lib.xmlFreeDoc.argtypes = [ctypes.c_void_p]
lib.xmlSetExternalEntityLoader.argtypes = [ctypes.c_void_p]
lib.xmlLineNumbersDefault.argtypes = [ctypes.c_int]

lib.xmlInitParser()
lib.xmlLineNumbersDefault(1)
# --nonet
lib.xmlSetExternalEntityLoader(ctypes.cast(lib.xmlNoNetExternalEntityLoader, ctypes.c_void_p))

# libxml2 writes its messages to stderr: fd 2 becomes a scratch file read after each request;
# this script's own failures go to the original stderr
log = os.fdopen(os.dup(2), "w")
sys.stderr = log
scratch_fd, scratch_path = tempfile.mkstemp(prefix="xmllint-resident-")
os.unlink(scratch_path)
os.dup2(scratch_fd, 2)
os.close(scratch_fd)

schemas = {}

# the file being read, served to libxml2 as a stream (xmllint reads "-" as one: an empty file is
# "Document is empty", as it says, not a silent failure)
current = {"data": b"", "pos": 0}


@READ
def read_current(_ctx, buffer, size):
    data, pos = current["data"], current["pos"]
    chunk = data[pos : pos + size]
    ctypes.memmove(buffer, chunk, len(chunk))
    current["pos"] = pos + len(chunk)
    return len(chunk)


@CLOSE
def close_current(_ctx):
    return 0


def captured():
    size = os.fstat(2).st_size
    return os.pread(2, size, 0) if size else b""


def validate(schema_path, data):
    os.ftruncate(2, 0)
    os.lseek(2, 0, os.SEEK_SET)
    schema = schemas.get(schema_path)
    if schema is None:
        pctxt = lib.xmlSchemaNewParserCtxt(schema_path.encode())
        schema = lib.xmlSchemaParse(pctxt) if pctxt else None
        if pctxt:
            lib.xmlSchemaFreeParserCtxt(pctxt)
        if not schema:
            os.write(2, b"WXS schema " + schema_path.encode() + b" failed to compile\n")
            return 5, captured()
        schemas[schema_path] = schema
    current["data"], current["pos"] = data, 0
    doc = lib.xmlReadIO(read_current, close_current, None, b"-", None, OPTIONS)
    current["data"] = b""
    if not doc:
        return 1, captured()
    vctxt = lib.xmlSchemaNewValidCtxt(schema)
    ret = lib.xmlSchemaValidateDoc(vctxt, doc)
    lib.xmlSchemaFreeValidCtxt(vctxt)
    lib.xmlFreeDoc(doc)
    if ret == 0:
        os.write(2, b"- validates\n")
        return 0, captured()
    if ret > 0:
        os.write(2, b"- fails to validate\n")
    else:
        os.write(2, b"- validation generated an internal error\n")
    return 3, captured()


def read_exactly(stream, n):
    chunks = []
    while n > 0:
        chunk = stream.read(n)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def main():
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    while True:
        header = stdin.readline()
        if not header:
            return
        schema_path, size = header.decode().rstrip("\n").rsplit(" ", 1)
        code, errors = validate(schema_path, read_exactly(stdin, int(size)))
        stdout.write(b"%d %d\n" % (code, len(errors)) + errors)
        stdout.flush()


if __name__ == "__main__":
    try:
        main()
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        pass
