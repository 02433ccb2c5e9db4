import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121233731_Initial } from './Migration20261121233731_Initial';
import { Migration20261121235336_EsignSessions } from './Migration20261121235336_EsignSessions';
import { Migration20261122000442_Templates } from './Migration20261122000442_Templates';
import { Migration20261122000919_Stamps } from './Migration20261122000919_Stamps';
import { Migration20261122001000_StampReferenceData } from './Migration20261122001000_StampReferenceData';
import { Migration20261122001534_StampSessions } from './Migration20261122001534_StampSessions';
import { Migration20261122002541_IdempotencyFingerprint } from './Migration20261122002541_IdempotencyFingerprint';
import { Migration20261122003234_PfxCredentials } from './Migration20261122003234_PfxCredentials';
import { Migration20261122003820_Signing } from './Migration20261122003820_Signing';
import { Migration20261122004347_SandboxEsp } from './Migration20261122004347_SandboxEsp';
import { Migration20261122014115_SignerJourney } from './Migration20261122014115_SignerJourney';
import { Migration20261123202841_ListOrder } from './Migration20261123202841_ListOrder';
import { Migration20261123205121_RateLimits } from './Migration20261123205121_RateLimits';
import { Migration20261124010000_AllStatesReferenceData } from './Migration20261124010000_AllStatesReferenceData';
import { Migration20261124013811_Webhooks } from './Migration20261124013811_Webhooks';
import { Migration20261124040932_AdminScope } from './Migration20261124040932_AdminScope';
import { Migration20261124041000_StampInstanceHistory } from './Migration20261124041000_StampInstanceHistory';
import { Migration20261124050000_SignerDecline } from './Migration20261124050000_SignerDecline';
import { Migration20261124051000_AllowDelegation } from './Migration20261124051000_AllowDelegation';
import { Migration20261124052000_Reminders } from './Migration20261124052000_Reminders';
import { Migration20261124053000_SigningOrder } from './Migration20261124053000_SigningOrder';

/** Applied in this order; a new migration file is added here by hand (see docs/development.md). */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261121233731_Initial', class: Migration20261121233731_Initial },
  { name: 'Migration20261121235336_EsignSessions', class: Migration20261121235336_EsignSessions },
  { name: 'Migration20261122000442_Templates', class: Migration20261122000442_Templates },
  { name: 'Migration20261122000919_Stamps', class: Migration20261122000919_Stamps },
  { name: 'Migration20261122001000_StampReferenceData', class: Migration20261122001000_StampReferenceData },
  { name: 'Migration20261122001534_StampSessions', class: Migration20261122001534_StampSessions },
  { name: 'Migration20261122002541_IdempotencyFingerprint', class: Migration20261122002541_IdempotencyFingerprint },
  { name: 'Migration20261122003234_PfxCredentials', class: Migration20261122003234_PfxCredentials },
  { name: 'Migration20261122003820_Signing', class: Migration20261122003820_Signing },
  { name: 'Migration20261122004347_SandboxEsp', class: Migration20261122004347_SandboxEsp },
  { name: 'Migration20261122014115_SignerJourney', class: Migration20261122014115_SignerJourney },
  { name: 'Migration20261123202841_ListOrder', class: Migration20261123202841_ListOrder },
  { name: 'Migration20261123205121_RateLimits', class: Migration20261123205121_RateLimits },
  { name: 'Migration20261124010000_AllStatesReferenceData', class: Migration20261124010000_AllStatesReferenceData },
  { name: 'Migration20261124013811_Webhooks', class: Migration20261124013811_Webhooks },
  { name: 'Migration20261124040932_AdminScope', class: Migration20261124040932_AdminScope },
  { name: 'Migration20261124041000_StampInstanceHistory', class: Migration20261124041000_StampInstanceHistory },
  { name: 'Migration20261124050000_SignerDecline', class: Migration20261124050000_SignerDecline },
  { name: 'Migration20261124051000_AllowDelegation', class: Migration20261124051000_AllowDelegation },
  { name: 'Migration20261124052000_Reminders', class: Migration20261124052000_Reminders },
  { name: 'Migration20261124053000_SigningOrder', class: Migration20261124053000_SigningOrder },
];
