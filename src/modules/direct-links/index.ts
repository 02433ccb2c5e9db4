/**
 * direct-links: a template's public signing link. Whoever opens it gives their name and contact and signs a session
 * made from the template for them. Built on templates (each session is initialize-from-template's) and esign.
 */
import type { ModuleManifest } from '../../platform/module';
import { DirectLink } from './direct-link.entity';
import { createDirectLinkPages } from './direct-link-page';
import { DirectLinkResolver } from './direct-link.resolver';
import { directLinkRestRoutes } from './direct-links.rest';

export const directLinksModule: ModuleManifest = {
  name: 'direct-links',
  entities: [DirectLink],
  resolvers: [DirectLinkResolver],
  restRoutes: directLinkRestRoutes,
  mounts: [{ path: '/', router: createDirectLinkPages }],
};
