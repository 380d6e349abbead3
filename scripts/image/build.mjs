#!/usr/bin/env node
// `npm run image`: builds the OCI image `cerulean:local` (docs/container.md) from what this project's machines
// reach, Debian's packages and the npm registry, with no base image pulled from a registry:
//
// 1. The base, `localhost/cerulean-base:<hash>`: a root file system of a few Debian packages (libc, libstdc++,
//    dash) unpacked by mmdebstrap, plus this machine's own `node` (Debian ships Node.js 18; the server needs
//    20): it runs in the image as it runs here, and the native addons built for it match it.
// 2. The image: `npm pack` of this checkout (the files its users install), installed for production
//    (`npm ci --omit=dev`), checked to serve (`node bin/cerulean.js` answers a request), then copied
//    over the base with the `azurite*` commands.
//
// Each step is skipped when its result is there already: the base is named by the hash of its recipe
// (rootfs.mjs and the node binary), the image carries the hash of everything in it
// (label org.cerulean.content-hash). `--force` builds both again. Exits non-zero on any failure.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkServes } from './check-serves.mjs';
import { containerEngine, run } from './engine.mjs';
import { buildRootfs, packages, recipeFile, serviceUser } from './rootfs.mjs';

export { serviceUser };

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
export const imageName = 'cerulean:local';
export const hashLabel = 'org.cerulean.content-hash';
const baseRepository = 'localhost/cerulean-base';
const nodeBinary = realpathSync(process.execPath);

function say(line) {
  process.stderr.write(`image: ${line}\n`);
}

function hashOf(...parts) {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex');
}

/** The label `hashLabel` of `image`, or undefined when there is no such image. */
function labelOf(engine, image) {
  const result = spawnSync(
    engine.command,
    ['image', 'inspect', '--format', `{{index .Config.Labels "${hashLabel}"}}`, image],
    {
      encoding: 'utf8',
      env: engine.env,
    },
  );
  return result.status === 0 ? result.stdout.trim() : undefined;
}

function imageIdOf(engine, image) {
  const result = spawnSync(engine.command, ['image', 'inspect', '--format', '{{.Id}}', image], {
    encoding: 'utf8',
    env: engine.env,
  });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

/** The base image's name, built when missing. */
function ensureBase(engine, work, force) {
  const recipe = hashOf(readFileSync(recipeFile), readFileSync(nodeBinary));
  const base = `${baseRepository}:${recipe.slice(0, 16)}`;
  if (!force && imageIdOf(engine, base) !== undefined) {
    say(`base ${base} is there`);
    return base;
  }
  say(`building the root file system (mmdebstrap: ${packages.join(' ')}; node ${process.version})`);
  const tarball = join(work, 'rootfs.tar');
  buildRootfs(tarball, nodeBinary);
  run(engine.command, ['import', tarball, base], { env: engine.env });
  rmSync(tarball);
  // Bases of earlier recipes go (not while an image still uses one).
  const names = run(engine.command, ['images', '--format', '{{.Repository}}:{{.Tag}}', baseRepository], {
    env: engine.env,
  });
  for (const name of names.split('\n').filter((name) => name !== '' && name !== base)) {
    spawnSync(engine.command, ['rmi', name], { stdio: 'ignore', env: engine.env });
  }
  return base;
}

/** `npm pack` of the checkout as it is compiled (dist/): the tarball's path. */
function pack(work) {
  const name = run('npm', ['pack', '--ignore-scripts', '--pack-destination', work, '--silent'], { cwd: repo }).trim();
  return join(work, name.split('\n').at(-1));
}

/** The packed tree installed for production into `app`, checked to serve, cleared of what never runs. */
function stageApp(tarball, app) {
  mkdirSync(app);
  run('tar', ['xzf', tarball, '-C', app, '--strip-components=1']);
  copyFileSync(join(repo, 'package-lock.json'), join(app, 'package-lock.json'));
  run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app });
  addSqliteAddon(app);
  for (const junk of ['better-sqlite3/deps', 'better-sqlite3/src', 'better-sqlite3/build/Release/obj']) {
    rmSync(join(app, 'node_modules', junk), { recursive: true, force: true });
  }
  run('find', [
    join(app, 'node_modules'),
    '(',
    '-name',
    '*.md',
    '-o',
    '-name',
    '*.map',
    '-o',
    '-name',
    '*.d.ts',
    '-o',
    '-name',
    '*.d.mts',
    ')',
    '-delete',
  ]);
}

/**
 * better-sqlite3's addon, for the node the image runs: this checkout's own when it is the same version (it
 * was built by this node), else built in the staged tree.
 */
function addSqliteAddon(app) {
  const version = (dir) =>
    JSON.parse(readFileSync(join(dir, 'node_modules/better-sqlite3/package.json'), 'utf8')).version;
  const built = join(repo, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
  if (existsSync(built) && version(repo) === version(app)) {
    mkdirSync(join(app, 'node_modules/better-sqlite3/build/Release'), { recursive: true });
    copyFileSync(built, join(app, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'));
  } else {
    run('npm', ['rebuild', 'better-sqlite3', '--foreground-scripts'], { cwd: app });
  }
}

function containerfile(base, hash) {
  const command = [
    'azurite',
    '-l',
    '/data',
    '--blobHost',
    '0.0.0.0',
    '--queueHost',
    '0.0.0.0',
    '--tableHost',
    '0.0.0.0',
  ];
  return [
    `FROM ${base}`,
    'COPY app /opt/cerulean',
    'COPY bin /usr/local/bin',
    'COPY entry.mjs /opt/cerulean/image/entry.mjs',
    'ENV PATH=/usr/local/bin:/usr/bin:/bin NODE_ENV=production CERULEAN_LOCATION=/data',
    'WORKDIR /opt/cerulean',
    'VOLUME /data',
    'EXPOSE 10000 10001 10002',
    // Root only until entry.mjs has taken the TLS files it is given: then uid and gid 10000 for good.
    'USER root',
    'STOPSIGNAL SIGTERM',
    `LABEL ${hashLabel}=${hash} org.opencontainers.image.title=cerulean`,
    `CMD ${JSON.stringify(command)}`,
    '',
  ].join('\n');
}

/** Builds `cerulean:local` unless an image with the same content is there; returns what it did. */
export async function buildImage({ force = false } = {}) {
  const engine = containerEngine();
  if (engine === undefined) throw new Error('neither podman nor docker is on PATH: install podman (docs/container.md)');
  const work = mkdtempSync(join(tmpdir(), 'cerulean-image-'));
  try {
    const base = ensureBase(engine, work, force);
    const tarball = pack(work);
    const commands = join(here, 'bin');
    const hash = hashOf(
      base,
      readFileSync(tarball),
      readFileSync(join(repo, 'package-lock.json')),
      readFileSync(fileURLToPath(import.meta.url)),
      readFileSync(join(here, 'entry.mjs')),
      ...readdirSync(commands)
        .sort()
        .flatMap((name) => [name, readFileSync(join(commands, name))]),
    );
    if (!force && labelOf(engine, imageName) === hash) {
      say(`${imageName} is up to date (${hash.slice(0, 16)})`);
      return { built: false, hash, engine };
    }
    const context = join(work, 'context');
    mkdirSync(context);
    say('installing the package for production (npm ci --omit=dev)');
    stageApp(tarball, join(context, 'app'));
    await checkServes(join(context, 'app'));
    cpSync(commands, join(context, 'bin'), { recursive: true });
    copyFileSync(join(here, 'entry.mjs'), join(context, 'entry.mjs'));
    for (const name of readdirSync(commands)) chmodSync(join(context, 'bin', name), 0o755);
    writeFileSync(join(context, 'Containerfile'), containerfile(base, hash));
    say(`building ${imageName}`);
    const previous = imageIdOf(engine, imageName);
    run(engine.command, ['build', '--tag', imageName, '--file', join(context, 'Containerfile'), context], {
      env: engine.env,
    });
    // The image it replaces, left without a name, goes (not while a container still uses it).
    if (previous !== undefined && previous !== imageIdOf(engine, imageName)) {
      spawnSync(engine.command, ['rmi', previous], { stdio: 'ignore', env: engine.env });
    }
    return { built: true, hash, engine };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  try {
    const { built } = await buildImage({ force: process.argv.includes('--force') });
    say(`${built ? 'built' : 'kept'} ${imageName} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } catch (error) {
    process.stderr.write(`image: ${error.message}\n`);
    process.exit(1);
  }
}
