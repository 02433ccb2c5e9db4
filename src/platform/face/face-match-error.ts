export type FaceMatchRefusal = 'no_face' | 'several_faces' | 'unreadable_image';

/** An image the matcher cannot use; `which` says whose, so the signer page can tell the signer what to fix. */
export class FaceMatchError extends Error {
  constructor(
    readonly reason: FaceMatchRefusal,
    readonly which: 'reference' | 'live',
    message: string,
  ) {
    super(message);
    this.name = 'FaceMatchError';
  }
}
