// What content/digests.ts and the digest thread say to each other. Bytes travel by transfer, there and back:
// each side owns a piece in turn, so neither holds memory the other has finished with.

export type DigestRequest =
  | { readonly kind: 'start'; readonly id: number; readonly md5: boolean; readonly crc64: boolean }
  /** `bytes` arrives transferred, and goes back with the 'updated' answer. */
  | { readonly kind: 'update'; readonly id: number; readonly bytes: Uint8Array }
  | { readonly kind: 'finish'; readonly id: number }
  | { readonly kind: 'abandon'; readonly id: number };

export type DigestAnswer =
  | { readonly kind: 'updated'; readonly id: number; readonly bytes: Uint8Array }
  | {
      readonly kind: 'finished';
      readonly id: number;
      readonly md5: Uint8Array | undefined;
      readonly crc64: Uint8Array | undefined;
    };
