import { AccessToken } from '../../modules/users/access-token.entity';
import { User } from '../../modules/users/user.entity';
import { StoredFile } from '../../modules/files/stored-file.entity';
import { Wallet, WalletEntry } from '../../modules/wallet/wallet.entity';
import { EsignSession } from '../../modules/esign/esign-session.entity';
import { Signer } from '../../modules/esign/signer.entity';
import { Template } from '../../modules/templates/template.entity';
import { PfxCredential } from '../../modules/pfx/pfx-credential.entity';
import { PlatformKey } from '../../modules/signing/platform-key.entity';
import { SandboxEspTransaction } from '../../modules/signing/esp/esp-transaction.entity';
import { StampArticle, StampState } from '../../modules/stamps/stamp-reference.entity';
import { StampInstance, StampOrder } from '../../modules/stamps/stamp-order.entity';
import { SignerOtp } from '../../modules/signer-checks/signer-otp.entity';
import { Notification } from '../../modules/notifications/notification.entity';
import { AuditEvent } from '../../modules/audit/audit-event.entity';
import { RateLimitCounter } from '../rate-limit/rate-limit-counter.entity';

/** Every entity of the service; the ORM is configured from this list only. */
export const entities = [
  User,
  AccessToken,
  Wallet,
  WalletEntry,
  StoredFile,
  EsignSession,
  Signer,
  Template,
  StampState,
  StampArticle,
  StampOrder,
  StampInstance,
  PfxCredential,
  PlatformKey,
  SandboxEspTransaction,
  SignerOtp,
  Notification,
  AuditEvent,
  RateLimitCounter,
];
