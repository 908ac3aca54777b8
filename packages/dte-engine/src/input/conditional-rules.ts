import type { ValidationIssue } from '@dte/error-catalog';
import { decimalPlaces } from './decimal';
import { NOTE_TYPES } from './references';
import { fechaEmisionWindow } from './santiago-date';
import { exportDecimals } from './totals';
import {
  isExportInput,
  type DomesticEmissionInput,
  type EmissionInput,
  type ExportEmissionInput,
} from './types';

/** SII FechaType bounds (DTE_v10.xsd); export references admit dates from 1950. */
const XSD_DATE_MIN = '2000-01-01';
const XSD_EXPORT_REF_DATE_MIN = '1950-01-01';
const XSD_DATE_MAX = '2050-12-31';
/** <IndServicio> values of the XSD for export documents. */
const EXPORT_IND_SERVICIO = [3, 4, 5];
/** <TpoCambio> is Dec6_4: at most 999999.9999. */
const TPO_CAMBIO_MAX = 999999.9999;

/**
 * Rules of the spec's tables that JSON Schema (draft-07 as OpenAPI 3.0 takes it) cannot state:
 * conditional requirements, the fecha_emision window (needs the clock), and the decimal places
 * of the SII XML types. They are schema rules, so they answer validation_failed with issues[]
 * like the schema does (the spec names invalid dates outside the window as validation_failed).
 * They run on a body that already passed the JSON Schema.
 */
export function conditionalIssues(input: EmissionInput, now: Date): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const add = (path: string, message: string): void => {
    if (!issues.some((i) => i.path === path)) issues.push({ path, message });
  };

  // fecha_emision window, America/Santiago (type 52: today..today+7, required by its schema).
  const window = fechaEmisionWindow(now, input.tipo_dte);
  if (input.fecha_emision < window.from || input.fecha_emision > window.to) {
    add(
      'fecha_emision',
      `must be between ${window.from} and ${window.to} (${input.tipo_dte === 52 ? 'today' : 'day 1 of the current month'} to today+7, America/Santiago)`,
    );
  }

  if (isExportInput(input)) exportIssues(input, add);
  else domesticIssues(input, add);
  return issues;
}

type Add = (path: string, message: string) => void;

function maxDecimals(value: number | undefined, places: number, path: string, add: Add, what: string): void {
  if (value !== undefined && decimalPlaces(value) > places) {
    add(path, `must have at most ${places} decimals (${what})`);
  }
}

function dateInXsdRange(value: string | undefined, path: string, add: Add, min = XSD_DATE_MIN): void {
  if (value !== undefined && (value < min || value > XSD_DATE_MAX)) {
    add(path, `must be between ${min} and ${XSD_DATE_MAX} (SII date type)`);
  }
}

function domesticIssues(input: DomesticEmissionInput, add: Add): void {
  const tipo = input.tipo_dte;

  // 33/34's receptor giro, direccion, comuna and forma_pago, and nd_reason/nc_reason only on
  // their note type, are said by each type's branch of dte-emission-request.schema.json.

  // Items: decimal places of QtyItem/PrcItem (Dec12_6) and DescuentoPct (2 decimals).
  input.items.forEach((item, i) => {
    maxDecimals(item.cantidad, 6, `items[${i}].cantidad`, add, 'SII QtyItem');
    maxDecimals(item.precio_unitario, 6, `items[${i}].precio_unitario`, add, 'SII PrcItem');
    maxDecimals(item.descuento_pct, 2, `items[${i}].descuento_pct`, add, 'SII DescuentoPct');
  });

  // descuento_global: not applicable to 46 (spec), nor to notes over a 46 (their lines are
  // withheld item by item: a global discount would break MontoImp = rate x withheld lines).
  const refs = input.references ?? [];
  const withheldNote = NOTE_TYPES.includes(tipo) && refs.some((r) => r.tipo_doc_ref === 46);
  const globals = input.descuento_global ?? [];
  if (globals.length > 0 && (tipo === 46 || withheldNote)) {
    add(
      'descuento_global',
      tipo === 46 ? 'is not applicable to tipo_dte 46' : 'is not applicable to a note over a type 46',
    );
  }
  globals.forEach((g, i) => {
    maxDecimals(g.valor, 2, `descuento_global[${i}].valor`, add, 'SII ValorDR');
    if (!g.es_porcentaje && !Number.isInteger(g.valor)) {
      add(`descuento_global[${i}].valor`, 'must be a whole number of pesos when es_porcentaje is false');
    }
    // A factura exenta has only exempt amounts: a discount there applies to them.
    if (tipo === 34 && g.aplica_exento === false) {
      add(
        `descuento_global[${i}].aplica_exento`,
        'must not be false on tipo_dte 34 (all its amounts are exempt)',
      );
    }
  });

  // References: line_num numbers the references 1..n (SII NroLinRef is a sequence);
  // on notes razon_ref is required ("each element has all of").
  const seen = new Set<number>();
  refs.forEach((r, i) => {
    if (seen.has(r.line_num) || r.line_num > refs.length) {
      add(`references[${i}].line_num`, `must number the references 1 to ${refs.length}, each once`);
    }
    seen.add(r.line_num);
    if ((tipo === 56 || tipo === 61) && r.razon_ref === undefined) {
      add(`references[${i}].razon_ref`, `is required on tipo_dte ${tipo}`);
    }
    dateInXsdRange(r.fecha_ref, `references[${i}].fecha_ref`, add);
  });

  (('pagos' in input && input.pagos) || []).forEach((p, i) =>
    dateInXsdRange(p.fecha, `pagos[${i}].fecha`, add),
  );

  // 52: tipo_despacho required except with ind_traslado 5, where sending it is an error.
  if (input.tipo_dte === 52) {
    const d = input.despacho;
    if (d.ind_traslado === 5 && d.tipo_despacho !== undefined) {
      add('despacho.tipo_despacho', 'must not be sent with ind_traslado 5 (traslado interno)');
    }
    if (d.ind_traslado !== 5 && d.tipo_despacho === undefined) {
      add('despacho.tipo_despacho', 'is required unless ind_traslado is 5');
    }
  }
}

function exportIssues(input: ExportEmissionInput, add: Add): void {
  const places = exportDecimals(input.tpo_moneda);
  const unit = places === 0 ? 'whole pesos in PESO CL' : 'SII export amounts';
  input.items.forEach((item, i) => {
    maxDecimals(item.cantidad, 6, `items[${i}].cantidad`, add, 'SII QtyItem');
    maxDecimals(item.precio_unitario, 6, `items[${i}].precio_unitario`, add, 'SII PrcItem');
    maxDecimals(item.monto_item, places, `items[${i}].monto_item`, add, unit);
  });
  maxDecimals(input.monto_exento, places, 'monto_exento', add, unit);
  maxDecimals(input.monto_total, places, 'monto_total', add, unit);
  if (input.ind_servicio !== undefined && !EXPORT_IND_SERVICIO.includes(input.ind_servicio)) {
    add('ind_servicio', `must be one of ${JSON.stringify(EXPORT_IND_SERVICIO)} (SII IndServicio of exports)`);
  }
  const om = input.otra_moneda;
  if (om) {
    // The SII: in export documents OtraMoneda states the amounts in Chilean pesos (PESO CL).
    if (om.tpo_moneda !== 'PESO CL') add('otra_moneda.tpo_moneda', 'must be "PESO CL" on export documents');
    maxDecimals(om.tpo_cambio, 4, 'otra_moneda.tpo_cambio', add, 'SII TpoCambio');
    if (om.tpo_cambio > TPO_CAMBIO_MAX) add('otra_moneda.tpo_cambio', `must be at most ${TPO_CAMBIO_MAX}`);
    maxDecimals(om.mnt_exe, 4, 'otra_moneda.mnt_exe', add, 'SII MntExeOtrMnda');
    maxDecimals(om.mnt_total, 4, 'otra_moneda.mnt_total', add, 'SII MntTotOtrMnda');
  }
  (input.referencias ?? []).forEach((r, i) =>
    dateInXsdRange(r.fecha_ref, `referencias[${i}].fecha_ref`, add, XSD_EXPORT_REF_DATE_MIN),
  );
  const a = input.aduana;
  if (a) {
    maxDecimals(a.tot_clau_venta, 2, 'aduana.tot_clau_venta', add, 'SII TotClauVenta');
    maxDecimals(a.peso_bruto, 2, 'aduana.peso_bruto', add, 'SII PesoBruto');
    maxDecimals(a.peso_neto, 2, 'aduana.peso_neto', add, 'SII PesoNeto');
    maxDecimals(a.mnt_flete, 4, 'aduana.mnt_flete', add, 'SII MntFlete');
    maxDecimals(a.mnt_seguro, 4, 'aduana.mnt_seguro', add, 'SII MntSeguro');
  }
}
