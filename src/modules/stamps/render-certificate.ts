import { PDFDocument, StandardFonts, degrees, rgb } from 'pdf-lib';
import { formatRupees } from '../../platform/money';
import type { StampOrder } from './stamp-order.entity';
import type { ProcuredStamp } from './vendors/vendor';

export interface CertificateFacts {
  order: StampOrder;
  serial: number;
  stateName: string;
  articleName: string;
  stamp: ProcuredStamp;
  /** Printed across the page for sandbox and mock stamps, which have no legal force. */
  watermark?: string;
}

const A4: [number, number] = [595.28, 841.89];

/** One A4 page with everything the stamp certifies, in the plain fonts every PDF reader has. */
export async function renderCertificate(facts: CertificateFacts): Promise<Uint8Array> {
  const { order, stamp } = facts;
  const doc = await PDFDocument.create();
  doc.setTitle(`e-Stamp Certificate ${stamp.certificateNumber}`);
  doc.setProducer('esign-estamp');
  doc.setCreationDate(stamp.issuedAt);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const page = doc.addPage(A4);
  const ink = rgb(0.1, 0.15, 0.35);
  page.drawRectangle({ x: 28, y: 28, width: A4[0] - 56, height: A4[1] - 56, borderColor: ink, borderWidth: 2 });
  page.drawText('e-Stamp Certificate', { x: 56, y: 770, size: 22, font: bold, color: ink });
  page.drawText(`${facts.stateName} (${order.stateCode})`, { x: 56, y: 745, size: 13, font, color: ink });

  const rows: [string, string][] = [
    ['Certificate No.', stamp.certificateNumber],
    ['Certificate Issued Date', stamp.issuedAt.toISOString().replace('T', ' ').slice(0, 19) + ' UTC'],
    ['Unique Doc. Reference', `${order.id}/${facts.serial}`],
    ['Account Reference', order.user.id],
    ['Description of Document', `${order.articleId}: ${facts.articleName}`],
    ['Property Description', order.description ?? '-'],
    ['Consideration Price (Rs.)', formatRupees(order.considerationPaise)],
    ['First Party', order.firstPartyName],
    ['First Party Address', order.firstPartyAddress ?? '-'],
    ['Second Party', order.secondPartyName],
    ['Stamp Duty Paid By', order.firstPartyName],
    ['Stamp Duty Amount (Rs.)', formatRupees(order.dutyPaise)],
    ['Verification Code', stamp.verificationCode],
  ];
  let y = 690;
  for (const [label, value] of rows) {
    page.drawText(label, { x: 56, y, size: 10, font: bold, color: ink });
    for (const line of wrap(value, 62)) {
      page.drawText(line, { x: 230, y, size: 10, font });
      y -= 14;
    }
    y -= 8;
  }
  if (facts.watermark) {
    // Diagonally across the lower half, sized to stay inside the frame.
    const size = Math.min(40, 520 / (bold.widthOfTextAtSize(facts.watermark, 1) || 1));
    page.drawText(facts.watermark, {
      x: 90,
      y: 120,
      size,
      font: bold,
      color: rgb(0.85, 0.2, 0.2),
      opacity: 0.25,
      rotate: degrees(30),
    });
  }
  page.drawText('Verify this certificate with its number and verification code.', { x: 56, y: 60, size: 9, font });
  return doc.save({ useObjectStreams: false });
}

/** Helvetica only encodes WinAnsi: anything else is replaced rather than failing the whole certificate. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e\xa0-\xff]/g, '?');
}

function wrap(text: string, width: number): string[] {
  const words = printable(text).split(/\s+/);
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if ((line + ' ' + word).trim().length > width && line) {
      lines.push(line);
      line = word;
    } else line = (line + ' ' + word).trim();
  }
  lines.push(line);
  return lines;
}
