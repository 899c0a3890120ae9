/**
 * @module http/endpoints/exports
 * Organization data exports: request, list, delete, consents, and the tarball's download.
 */
import type { Endpoint } from "../../endpoint.js";
import deleteExport from "./delete-export.js";
import downloadExport from "./download-export.js";
import exportConsents from "./export-consents.js";
import exportRealm from "./export-realm.js";
import listExports from "./list-exports.js";

export const EXPORT_ENDPOINTS: readonly Endpoint[] = [
  exportRealm,
  listExports,
  exportConsents,
  deleteExport,
  downloadExport,
];
