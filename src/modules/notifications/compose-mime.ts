import MailComposer from 'nodemailer/lib/mail-composer';

export interface MailParts {
  from: { name: string; address: string };
  to: string;
  replyTo?: string;
  subject: string;
  text: string;
  html: string;
  /** The language it is written in (a BCP 47 tag): its Content-Language header. */
  language?: string;
  /** Email one-time codes: also sent as the OTP-Token header, bound to this origin, so mail clients can fill it in. */
  otp?: { code: string; origin: string };
}

/**
 * The complete RFC 5322 message (multipart/alternative: text/plain, then text/html), built once when the
 * message is queued. The row then holds exactly what SMTP will carry, and every retry sends the same bytes
 * under the same Message-ID, so a duplicate after a crash is recognisable as one.
 */
export async function composeMime(parts: MailParts): Promise<string> {
  const build = (otp: MailParts['otp']) =>
    new MailComposer({
      from: parts.from,
      to: parts.to,
      replyTo: parts.replyTo,
      subject: parts.subject,
      text: parts.text,
      html: parts.html,
      otp,
      // RFC 3834: automatic replies must not answer this message.
      headers: { 'Auto-Submitted': 'auto-generated', ...(parts.language && { 'Content-Language': parts.language }) },
      // Only the strings given here go into the message: never a file or URL named by data.
      disableFileAccess: true,
      disableUrlAccess: true,
    })
      .compile()
      .build();
  let bytes: Buffer;
  try {
    bytes = await build(parts.otp);
  } catch (error) {
    // The header wants an https (or loopback http) origin; a plain-http PUBLIC_URL goes without it.
    if ((error as { code?: string }).code !== 'EOTP') throw error;
    bytes = await build(undefined);
  }
  return bytes.toString('utf8');
}
