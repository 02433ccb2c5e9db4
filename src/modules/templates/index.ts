/**
 * templates: saved signer layouts over a file (or several documents), versioned; a session can be started from one.
 * Built on the esign module (its plans, inputs and session views); sessions know their template by id only.
 */
import type { ModuleManifest } from '../../platform/module';
import { Template } from './template.entity';
import { TemplateResolver } from './template.resolver';
import { templateRestRoutes } from './templates.rest';

export {
  initializeFromTemplate,
  originOf,
  planFromTemplate,
  prepareTemplate,
  type InitializeFromTemplateRequest,
  type PreparedTemplate,
} from './initialize-from-template';
export { getOwnTemplate } from './read-templates';
export { Template } from './template.entity';

export const templatesModule: ModuleManifest = {
  name: 'templates',
  entities: [Template],
  resolvers: [TemplateResolver],
  restRoutes: templateRestRoutes,
};
