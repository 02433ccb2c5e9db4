/**
 * PKCS#11 through pkcs11js: load the configured libraries, list the tokens and their X.509 certificates, and sign
 * one digest with the private key that shares a certificate's CKA_ID.
 *
 * Every call is synchronous: libraries are initialised without locking callbacks, so they must never be called
 * from two threads at once, and one signer at a time is all a local bridge serves. No session outlives a call
 * of this module.
 */
import { X509Certificate, createHash } from 'node:crypto';
import pkcs11js from 'pkcs11js';
import type { Handle, PKCS11, Template } from 'pkcs11js';
import { ecdsaRawToDer } from './ecdsa.ts';

export interface ModuleStatus {
  path: string;
  loaded: boolean;
  error?: string;
}

export interface TokenSummary {
  module: string;
  slot_id: string;
  label: string;
  manufacturer: string;
  model: string;
  serial: string;
}

export interface TokenCertificate {
  /** Stable across requests and restarts: SHA-256 of the token serial, CKA_ID and DER, 32 hex characters. */
  id: string;
  modulePath: string;
  tokenLabel: string;
  tokenSerial: string;
  ckaId: Buffer;
  label: string;
  der: Buffer;
  x509: X509Certificate;
  keyType: 'RSA' | 'EC';
}

export interface PinState {
  countLow: boolean;
  finalTry: boolean;
  locked: boolean;
}

export type SignOutcome =
  | { kind: 'signed'; signature: Buffer }
  | { kind: 'wrong_pin'; pin: PinState }
  | { kind: 'refused'; code: 'pin_locked' | 'token_removed' | 'key_not_found' | 'sign_failed'; message: string };

interface LoadedModule {
  path: string;
  lib: PKCS11 | null;
  error: string | undefined;
}

interface PresentToken {
  slot: Handle;
  summary: TokenSummary;
  flags: number;
}

/** DER DigestInfo prefix for SHA-256 (RFC 8017, 9.2 note 1): CKM_RSA_PKCS signs the DigestInfo we build. */
const SHA256_DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex');

/** Errors that mean the token went away between listing and signing. */
const TOKEN_GONE = new Set([
  'CKR_TOKEN_NOT_PRESENT',
  'CKR_DEVICE_REMOVED',
  'CKR_SLOT_ID_INVALID',
  'CKR_SESSION_HANDLE_INVALID',
  'CKR_SESSION_CLOSED',
  'CKR_DEVICE_ERROR',
]);

export class Tokens {
  private readonly modules: LoadedModule[];

  constructor(modulePaths: readonly string[]) {
    this.modules = modulePaths.map((path) => ({ path, lib: null, error: undefined }));
    for (const module of this.modules) this.refresh(module);
  }

  moduleStatus(): ModuleStatus[] {
    return this.modules.map((m) => (m.lib ? { path: m.path, loaded: true } : { path: m.path, loaded: false, error: m.error }));
  }

  /** Tokens present now, in every loaded module. */
  listTokens(): TokenSummary[] {
    return this.modules.flatMap((module) => {
      this.refresh(module);
      return module.lib ? presentTokens(module).map((t) => t.summary) : [];
    });
  }

  /** Every X.509 certificate with an RSA or EC key on every present token, without duplicates. */
  listCertificates(): TokenCertificate[] {
    const byId = new Map<string, TokenCertificate>();
    for (const module of this.modules) {
      this.refresh(module);
      if (!module.lib) continue;
      for (const token of presentTokens(module)) {
        let found: TokenCertificate[];
        try {
          found = withSession(module.lib, token.slot, (session) => readCertificates(module, token, session));
        } catch (error) {
          // A token pulled out while we read it: it is simply absent from this answer.
          console.error(
            `esign-dsc-bridge: could not read the certificates of token "${token.summary.label}": ${errorName(error)}`,
          );
          continue;
        }
        for (const cert of found) if (!byId.has(cert.id)) byId.set(cert.id, cert);
      }
    }
    return [...byId.values()];
  }

  findCertificate(id: string): TokenCertificate | undefined {
    return this.listCertificates().find((c) => c.id === id);
  }

  /** The token's own PIN counter flags, or null when the token is not present. */
  pinState(cert: TokenCertificate): PinState | null {
    const module = this.moduleFor(cert);
    if (!module) return null;
    this.refresh(module);
    const token = findToken(module, cert);
    return token ? pinStateOf(token.flags) : null;
  }

  /**
   * Logs in with the PIN, signs the SHA-256 digest with the certificate's private key, logs out. The caller owns
   * and wipes the PIN buffer.
   */
  sign(cert: TokenCertificate, pin: Buffer, digest: Buffer): SignOutcome {
    const module = this.moduleFor(cert);
    if (module) this.refresh(module);
    const token = module?.lib ? findToken(module, cert) : undefined;
    if (!module?.lib || !token) return { kind: 'refused', code: 'token_removed', message: 'The token is no longer connected.' };
    const lib = module.lib;
    try {
      return withSession(lib, token.slot, (session) => {
        login(lib, session, pin);
        try {
          return signWithKey(lib, session, cert, digest);
        } finally {
          ignoreErrors(() => lib.C_Logout(session));
        }
      });
    } catch (error) {
      return classifySignError(module, cert, errorName(error));
    }
  }

  close(): void {
    for (const module of this.modules) {
      if (module.lib) ignoreErrors(() => module.lib?.C_Finalize());
      module.lib = null;
    }
  }

  private moduleFor(cert: TokenCertificate): LoadedModule | undefined {
    return this.modules.find((m) => m.path === cert.modulePath);
  }

  /**
   * Re-initialises a library before each use. Many libraries fix their slot list at C_Initialize (SoftHSM does,
   * and so do some token drivers): a token plugged in later is seen only after a new C_Initialize. No session is
   * open between calls, so this loses nothing. A library that failed to load is tried again.
   */
  private refresh(module: LoadedModule): void {
    if (module.lib) {
      ignoreErrors(() => module.lib?.C_Finalize());
    } else {
      try {
        const lib = new pkcs11js.PKCS11();
        lib.load(module.path);
        module.lib = lib;
      } catch (error) {
        module.error = `could not load the library: ${errorMessage(error)}`;
        return;
      }
    }
    try {
      module.lib.C_Initialize();
      module.error = undefined;
    } catch (error) {
      if (errorName(error) === 'CKR_CRYPTOKI_ALREADY_INITIALIZED') return;
      module.error = `C_Initialize failed: ${errorName(error)}`;
      ignoreErrors(() => module.lib?.close());
      module.lib = null;
    }
  }
}

function classifySignError(module: LoadedModule, cert: TokenCertificate, name: string): SignOutcome {
  if (name === 'CKR_PIN_INCORRECT' || name === 'CKR_PIN_INVALID' || name === 'CKR_PIN_LEN_RANGE') {
    // The token keeps the only retry counter; its flags say how close it is to locking.
    const token = module.lib ? findToken(module, cert) : undefined;
    const pin = token ? pinStateOf(token.flags) : { countLow: false, finalTry: false, locked: false };
    if (pin.locked) return { kind: 'refused', code: 'pin_locked', message: 'The token is locked after too many wrong PINs.' };
    return { kind: 'wrong_pin', pin };
  }
  if (name === 'CKR_PIN_LOCKED') {
    return { kind: 'refused', code: 'pin_locked', message: 'The token is locked after too many wrong PINs.' };
  }
  if (TOKEN_GONE.has(name)) return { kind: 'refused', code: 'token_removed', message: 'The token was removed.' };
  return { kind: 'refused', code: 'sign_failed', message: `The token refused to sign (${name}).` };
}

function login(lib: PKCS11, session: Handle, pin: Buffer): void {
  // pkcs11js takes the PIN only as a JS string, which cannot be wiped; it lives only for this call.
  const text = pin.toString('utf8');
  try {
    lib.C_Login(session, pkcs11js.CKU_USER, text);
  } catch (error) {
    // Another call of ours left the token logged in: log out and check this PIN anyway.
    if (errorName(error) !== 'CKR_USER_ALREADY_LOGGED_IN') throw error;
    lib.C_Logout(session);
    lib.C_Login(session, pkcs11js.CKU_USER, text);
  }
}

function signWithKey(lib: PKCS11, session: Handle, cert: TokenCertificate, digest: Buffer): SignOutcome {
  const keys = findObjects(lib, session, [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
    { type: pkcs11js.CKA_ID, value: cert.ckaId },
  ]);
  if (cert.ckaId.length === 0 || keys.length === 0) {
    return { kind: 'refused', code: 'key_not_found', message: 'The token holds no private key for this certificate.' };
  }
  if (cert.keyType === 'RSA') {
    lib.C_SignInit(session, { mechanism: pkcs11js.CKM_RSA_PKCS }, keys[0]!);
    const signature = lib.C_Sign(session, Buffer.concat([SHA256_DIGEST_INFO, digest]), Buffer.alloc(1024));
    return { kind: 'signed', signature: Buffer.from(signature) };
  }
  lib.C_SignInit(session, { mechanism: pkcs11js.CKM_ECDSA }, keys[0]!);
  const raw = lib.C_Sign(session, digest, Buffer.alloc(1024));
  return { kind: 'signed', signature: ecdsaRawToDer(raw) };
}

function presentTokens(module: LoadedModule): PresentToken[] {
  const lib = module.lib;
  if (!lib) return [];
  let slots: Handle[];
  try {
    slots = lib.C_GetSlotList(true);
  } catch (error) {
    module.error = `C_GetSlotList failed: ${errorName(error)}`;
    return [];
  }
  const tokens: PresentToken[] = [];
  for (const slot of slots) {
    try {
      const info = lib.C_GetTokenInfo(slot);
      // SoftHSM (and some drivers) always offer an empty, uninitialised token: nothing to sign with there.
      if ((info.flags & pkcs11js.CKF_TOKEN_INITIALIZED) === 0) continue;
      const summary = {
        module: module.path,
        slot_id: slotIdText(slot),
        label: info.label.trim(),
        manufacturer: info.manufacturerID.trim(),
        model: info.model.trim(),
        serial: info.serialNumber.trim(),
      };
      tokens.push({ slot, summary, flags: info.flags });
    } catch {
      // A slot whose token vanished answers with an error (SoftHSM: CKR_GENERAL_ERROR): it has no token now.
    }
  }
  return tokens;
}

function findToken(module: LoadedModule, cert: TokenCertificate): PresentToken | undefined {
  return presentTokens(module).find((t) => t.summary.serial === cert.tokenSerial && t.summary.label === cert.tokenLabel);
}

function readCertificates(module: LoadedModule, token: PresentToken, session: Handle): TokenCertificate[] {
  const lib = module.lib!;
  const handles = findObjects(lib, session, [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_CERTIFICATE },
    { type: pkcs11js.CKA_CERTIFICATE_TYPE, value: pkcs11js.CKC_X_509 },
  ]);
  const certificates: TokenCertificate[] = [];
  for (const handle of handles) {
    const der = readAttribute(lib, session, handle, pkcs11js.CKA_VALUE);
    if (!der || der.length === 0) continue;
    let x509: X509Certificate;
    try {
      x509 = new X509Certificate(der);
    } catch {
      continue; // not a certificate Node can read: it cannot be shown to the signer either
    }
    const keyType = x509.publicKey.asymmetricKeyType === 'rsa' ? 'RSA' : x509.publicKey.asymmetricKeyType === 'ec' ? 'EC' : null;
    if (!keyType) continue;
    const ckaId = readAttribute(lib, session, handle, pkcs11js.CKA_ID) ?? Buffer.alloc(0);
    const label = readAttribute(lib, session, handle, pkcs11js.CKA_LABEL)?.toString('utf8') ?? '';
    const { serial, label: tokenLabel } = token.summary;
    const id = certificateId(serial, ckaId, der);
    certificates.push({ id, modulePath: module.path, tokenLabel, tokenSerial: serial, ckaId, label, der, x509, keyType });
  }
  return certificates;
}

/** Length-prefixed parts, so that two different (serial, CKA_ID) pairs can never hash alike. */
function certificateId(tokenSerial: string, ckaId: Buffer, der: Buffer): string {
  const hash = createHash('sha256');
  for (const part of [Buffer.from(tokenSerial, 'utf8'), ckaId, der]) {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(part.length);
    hash.update(length).update(part);
  }
  return hash.digest('hex').slice(0, 32);
}

function withSession<T>(lib: PKCS11, slot: Handle, use: (session: Handle) => T): T {
  const session = lib.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
  try {
    return use(session);
  } finally {
    ignoreErrors(() => lib.C_CloseSession(session));
  }
}

function findObjects(lib: PKCS11, session: Handle, template: Template): Handle[] {
  lib.C_FindObjectsInit(session, template);
  try {
    const found: Handle[] = [];
    for (;;) {
      const batch = lib.C_FindObjects(session, 32);
      found.push(...batch);
      if (batch.length === 0 || found.length >= 1000) return found;
    }
  } finally {
    ignoreErrors(() => lib.C_FindObjectsFinal(session));
  }
}

function readAttribute(lib: PKCS11, session: Handle, handle: Handle, type: number): Buffer | null {
  try {
    const [attribute] = lib.C_GetAttributeValue(session, handle, [{ type }]);
    return attribute ? Buffer.from(attribute.value) : null;
  } catch {
    return null; // CKR_ATTRIBUTE_TYPE_INVALID and friends: the object simply has no such attribute
  }
}

function pinStateOf(flags: number): PinState {
  return {
    countLow: (flags & pkcs11js.CKF_USER_PIN_COUNT_LOW) !== 0,
    finalTry: (flags & pkcs11js.CKF_USER_PIN_FINAL_TRY) !== 0,
    locked: (flags & pkcs11js.CKF_USER_PIN_LOCKED) !== 0,
  };
}

/** Slot ids are native CK_ULONGs (8 bytes on 64-bit Linux and macOS, 4 on Windows), little-endian here. */
function slotIdText(slot: Handle): string {
  let value = 0n;
  for (let i = slot.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(slot[i]!);
  return value.toString();
}

function errorName(error: unknown): string {
  // A Pkcs11Error's message is the CKR_ constant's name.
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}

function errorMessage(error: unknown): string {
  return errorName(error).slice(0, 300);
}

function ignoreErrors(action: () => void): void {
  try {
    action();
  } catch {
    // closing and logging out are best effort: the token may already be gone
  }
}
