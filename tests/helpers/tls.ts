// A throwaway self-signed certificate for HTTPS tests, and SDK pipelines that trust it.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDefaultHttpClient, type HttpClient } from '@azure/core-rest-pipeline';

/** Whether openssl is here (node:crypto cannot make X.509 certificates). */
export function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A certificate for localhost and 127.0.0.1, valid a day: `cert.pem` and `key.pem` (unencrypted) in `dir`. */
export function makeTestCertificate(dir: string): { certFile: string; keyFile: string; certPem: string } {
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  const args = ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile];
  args.push('-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost');
  execFileSync('openssl', args, { stdio: 'ignore' });
  return { certFile, keyFile, certPem: readFileSync(certFile, 'utf8') };
}

/**
 * The storage SDKs take no tlsOptions: their pipeline's core HTTP client (the slot
 * getCoreClientOptions fills on first use) is given one that trusts `ca`.
 */
export function trustingCertificate<P extends object>(pipeline: P, ca: string): P {
  const base = createDefaultHttpClient();
  const client: HttpClient = {
    sendRequest: (request) => {
      request.tlsSettings = { ca };
      return base.sendRequest(request);
    },
  };
  (pipeline as { _coreHttpClient?: HttpClient })._coreHttpClient = client;
  return pipeline;
}
