// Types of engine.mjs.
export declare const containersConf: string;
export interface ContainerEngine {
  readonly name: 'podman' | 'docker';
  readonly command: string;
  /** The whole environment to run `command` with. */
  readonly env: NodeJS.ProcessEnv;
}
export declare function containerEngine(): ContainerEngine | undefined;
