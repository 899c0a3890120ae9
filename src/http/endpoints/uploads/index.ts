/**
 * @module http/endpoints/uploads
 * Files: upload (multipart and tus), downloads and temporary URLs, attachments, thumbnail status.
 */
import type { Endpoint } from "../../endpoint.js";
import { deleteAttachmentEndpoint, listAttachmentsEndpoint } from "./attachments.js";
import {
  downloadFileEndpoint,
  serveFileEndpoint,
  serveTemporaryFileEndpoint,
  serveThumbnailEndpoint,
} from "./serve-file.js";
import { temporaryUrlEndpoint } from "./temporary-url.js";
import { thumbnailStatusEndpoint } from "./thumbnail-status.js";
import { tusCreateEndpoint, tusDeleteEndpoint, tusHeadEndpoint, tusPatchEndpoint } from "./tus.js";
import { uploadFileEndpoint } from "./upload-file.js";

export const UPLOAD_ENDPOINTS: readonly Endpoint[] = [
  uploadFileEndpoint,
  temporaryUrlEndpoint,
  thumbnailStatusEndpoint,
  listAttachmentsEndpoint,
  deleteAttachmentEndpoint,
  tusCreateEndpoint,
  tusHeadEndpoint,
  tusPatchEndpoint,
  tusDeleteEndpoint,
  serveFileEndpoint,
  downloadFileEndpoint,
  serveThumbnailEndpoint,
  serveTemporaryFileEndpoint,
];
