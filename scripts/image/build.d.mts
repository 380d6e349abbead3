// Types of build.mjs (plain JavaScript, as `npm run image` runs it without a compile step).
export declare const imageName: string;
export declare const hashLabel: string;
export declare const serviceUser: { readonly name: string; readonly id: number };
export declare function buildImage(options?: {
  force?: boolean;
}): Promise<{ built: boolean; hash: string; engine: { name: string; command: string; env: NodeJS.ProcessEnv } }>;
