import type { Language } from './languages';

/**
 * How far a catalog's text can be trusted, from the source text down to a draft nobody has checked. Legal wording
 * (consent, decline, the eSign consent) is only final once a lawyer has read it in that language.
 */
export const REVIEW_STATES = [
  /** The original the others are translated from (English). */
  'source',
  /** Drafted by a machine (an AI model); no person has checked it. */
  'machine-drafted, review pending',
  /** A native speaker corrected it; a lawyer has not read the legal wording yet. */
  'native-speaker reviewed, legal review pending',
  /** A native speaker and a lawyer have both read it. */
  'reviewed',
] as const;
export type ReviewState = (typeof REVIEW_STATES)[number];

/** Who or what produced a catalog, and how far it was checked: the first thing in each catalog file. */
export interface CatalogMeta {
  language: Language | string;
  /** The language's name in English. */
  name: string;
  /** Who or what wrote the text: a person, a vendor, or "an AI model ...". */
  produced_by: string;
  review_state: ReviewState | string;
  /** Each review: who (name or role), when (YYYY-MM-DD) and what they checked; empty until someone has. */
  reviews: { by: string; on: string; scope: string }[];
  /** Anything a reader of the catalog must know (its limits, open questions). */
  notes?: string;
}

/** Messages by key: nested objects, each leaf an ICU message. */
export interface MessageTree {
  [key: string]: string | MessageTree;
}

/** One language's catalog file: its metadata and its messages. */
export interface Catalog {
  meta: CatalogMeta;
  messages: MessageTree;
}

/** Every message by its dotted key (`invite.subject`), in the file's order. */
export function flattenMessages(tree: MessageTree, prefix = ''): Map<string, string> {
  const flat = new Map<string, string>();
  for (const [key, value] of Object.entries(tree)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'string') flat.set(path, value);
    else for (const [inner, message] of flattenMessages(value, path)) flat.set(inner, message);
  }
  return flat;
}

/** The keys of `source` that `target` lacks, or leaves empty (an empty message falls back too). */
export function missingKeys(source: MessageTree, target: MessageTree): string[] {
  const have = flattenMessages(target);
  return [...flattenMessages(source).keys()].filter((key) => !have.get(key)?.trim());
}

/** The dotted keys of a message tree's type, for a typed `t` (`'invite.subject' | 'invite.asks' | ...`). */
export type MessageKey<T> = {
  [K in keyof T & string]: T[K] extends string ? K : `${K}.${MessageKey<T[K]>}`;
}[keyof T & string];
