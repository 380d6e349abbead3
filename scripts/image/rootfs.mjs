// The image's root file system (scripts/image/build.mjs): a few Debian packages unpacked by mmdebstrap,
// this machine's node, the service user and /data. Its base image is named by the hash of this file.
import { fileURLToPath } from 'node:url';
import { run } from './engine.mjs';

/** This file: what the base image's name hashes, with the node binary. */
export const recipeFile = fileURLToPath(import.meta.url);
/** The Debian packages of the root file system: what node and /bin/sh load, nothing else. */
export const packages = ['base-files', 'libc6', 'libgcc-s1', 'libstdc++6', 'gcc-12-base', 'dash'];
/** The server's user: not root, and a fixed id so that a bind-mounted /data can be given to it. */
export const serviceUser = { name: 'cerulean', id: 10000 };

/** The root file system's tarball: the packages unpacked, node, the user, /data; checked to run node. */
export function buildRootfs(tarball, nodeBinary) {
  const passwd = `root:x:0:0:root:/root:/bin/sh\n${serviceUser.name}:x:${serviceUser.id}:${serviceUser.id}::/data:/bin/sh\n`;
  const group = `root:x:0:\n${serviceUser.name}:x:${serviceUser.id}:\n`;
  const hook = [
    'set -e',
    'mkdir -p "$1/usr/local/bin" "$1/data" "$1/tmp" "$1/root"',
    `cp ${nodeBinary} "$1/usr/local/bin/node"`,
    `printf '%s' '${passwd}' > "$1/etc/passwd"`,
    `printf '%s' '${group}' > "$1/etc/group"`,
    `chown ${serviceUser.id}:${serviceUser.id} "$1/data"`,
    'chmod 1777 "$1/tmp"',
    // What nothing here reads; the packages' copyright files stay.
    'find "$1/usr/share/doc" -type f ! -name copyright -delete',
    'cd "$1/usr/share" && rm -rf man locale info lintian bug menu gdb polkit-1 dict',
    // node runs on these libraries alone: a missing one fails the build here, not the container later.
    'chroot "$1" /usr/local/bin/node -e "process.exit(0)"',
  ].join('\n');
  // The extract variant unpacks the packages and runs none of their scripts (nothing here needs them);
  // its hook runs after the unpacking.
  run('mmdebstrap', [
    '--variant=extract',
    `--include=${packages.join(',')}`,
    `--extract-hook=${hook}`,
    'bookworm',
    tarball,
  ]);
}
