// @ts-check
// The page registry: the path of each page (data-page of its <main>, as pages.ts renders it) and
// the module that fills it. A new page is one new module here plus its shell in ../../pages.ts.
import agentes from './agentes.js';
import apiKeys from './api-keys.js';
import aprobaciones from './aprobaciones.js';
import auditoria from './auditoria.js';
import certificados from './certificados.js';
import documento from './documento.js';
import documentos from './documentos.js';
import emitir from './emitir.js';
import folios from './folios.js';
import ingresar from './ingresar.js';
import miembros from './miembros.js';
import organizacion from './organizacion.js';
import plan from './plan.js';
import webhooks from './webhooks.js';

/**
 * Fills one page; `me` is who is signed in (null on the login page).
 * @typedef {(me: import('../lib/chrome.js').Me | null) => void | Promise<unknown>} PageRun
 */

/** @type {Record<string, PageRun>} */
export const PAGES = {
  '/ingresar': ingresar,
  '/organizacion': organizacion,
  '/documentos': documentos,
  '/documentos/:id': documento,
  '/emitir': emitir,
  '/certificados': certificados,
  '/folios': folios,
  '/webhooks': webhooks,
  '/api-keys': apiKeys,
  '/miembros': miembros,
  '/auditoria': auditoria,
  '/aprobaciones': aprobaciones,
  '/agentes': agentes,
  '/plan': plan,
};
