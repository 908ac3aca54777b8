// Preload for profiling a service under the bench: NODE_OPTIONS="--import ./scripts/bench/cpu-profile.mjs"
// with CPU_PROFILE_DIR set. Writes <dir>/<argv basename>-<pid>.cpuprofile (Chrome DevTools format)
// when the process exits. (--cpu-prof itself is not allowed in NODE_OPTIONS.)
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';

const dir = process.env.CPU_PROFILE_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.enable');
  session.post('Profiler.start');
  const name = path.basename(path.dirname(path.dirname(process.argv[1] ?? 'node')));
  process.on('exit', () => {
    session.post('Profiler.stop', (err, res) => {
      if (!err)
        fs.writeFileSync(path.join(dir, `${name}-${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  });
}
