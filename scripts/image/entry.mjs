// The image's commands (azurite, azurite-blob, …, cerulean) run this: Cerulean's command line, as the
// service user. Started as root (the image's default), it first takes the TLS files it is given, which
// may be readable by root alone (Testcontainers' withSsl copies the key in as root's, mode 0600), into a
// private directory of the service user, then gives up root for good (uid and gid 10000) before the
// server reads anything else or listens. Started as another user (`--user`), it changes nothing.
import { copyFileSync, chownSync, mkdtempSync } from 'node:fs';
import { basename, join } from 'node:path';
import { runCli } from '../dist/src/cli/main.js';

/** The service user of scripts/image/rootfs.mjs. */
const serviceId = 10000;
const fileFlags = new Set(['--cert', '--key']);
const fileVariables = ['CERULEAN_CERT', 'CERULEAN_KEY'];

/** `file` copied into `dir`, owned by the service user with mode 0600: the copy's path. */
function handOver(file, dir, index) {
  const copy = join(dir, `${index}-${basename(file)}`);
  copyFileSync(file, copy);
  chownSync(copy, serviceId, serviceId);
  return copy;
}

/** The command line with its TLS files handed over to the service user; then root is dropped. */
function dropRoot(argv) {
  let dir;
  const privateDir = () => {
    if (dir === undefined) {
      dir = mkdtempSync('/tmp/cerulean-tls-'); // mode 0700
      chownSync(dir, serviceId, serviceId);
    }
    return dir;
  };
  const out = [...argv];
  for (let i = 0; i < out.length; i++) {
    const equals = out[i].indexOf('=');
    const name = equals < 0 ? out[i] : out[i].slice(0, equals);
    if (!fileFlags.has(name)) continue;
    if (equals >= 0) out[i] = `${name}=${handOver(out[i].slice(equals + 1), privateDir(), i)}`;
    else if (i + 1 < out.length) out[i + 1] = handOver(out[i + 1], privateDir(), ++i);
  }
  for (const variable of fileVariables) {
    if (process.env[variable]) process.env[variable] = handOver(process.env[variable], privateDir(), variable);
  }
  process.setgroups([serviceId]);
  process.setgid(serviceId);
  process.setuid(serviceId);
  return out;
}

const argv = process.argv.slice(2);
await runCli(process.getuid() === 0 ? dropRoot(argv) : argv);
