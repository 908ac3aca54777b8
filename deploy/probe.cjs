#!/usr/bin/env node
/**
 * Kubernetes exec probe: `node deploy/probe.cjs <port> <path>` asks http://127.0.0.1:<port><path>
 * and exits 0 on a 2xx answer, 1 otherwise (the answer or error is printed, so `kubectl describe
 * pod` shows why). The pipeline services' health servers listen on 127.0.0.1 only, where an
 * httpGet probe (sent to the pod IP) cannot reach them; a process inside the container can.
 */
'use strict';
const http = require('node:http');

const [port, path = '/healthz', timeout = '3000'] = process.argv.slice(2);
if (!/^\d+$/.test(port ?? '') || !path.startsWith('/')) {
  console.error('usage: probe.cjs <port> </path> [timeout ms]');
  process.exit(2);
}
const req = http.get({ host: '127.0.0.1', port: Number(port), path, timeout: Number(timeout) }, (res) => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (chunk) => (body += chunk));
  res.on('end', () => {
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    (ok ? console.log : console.error)(`${res.statusCode} ${body.slice(0, 500)}`);
    process.exit(ok ? 0 : 1);
  });
});
req.on('timeout', () => req.destroy(new Error(`no answer within ${timeout} ms`)));
req.on('error', (err) => {
  console.error(`${path} on port ${port}: ${err.message}`);
  process.exit(1);
});
