// @ts-check
// Forms: the RUT check digit, required fields and e-mails checked as they are typed
// (aria-invalid, messages linked to their inputs), and a submit handler that validates first.
import { clearNotice, notice } from './dom.js';
import { diaApi } from './format.js';

/**
 * A RUT with a right modulo-11 check digit (dots allowed, a hyphen before the digit).
 * @param {string} raw
 */
export function rutOk(raw) {
  const m = /^0*([0-9]{1,8})-([0-9Kk])$/.exec(String(raw).replace(/\./g, '').trim());
  if (!m) return false;
  const body = m[1] ?? '';
  let sum = 0;
  let w = 2;
  for (let i = body.length - 1; i >= 0; i--) {
    sum += Number(body[i]) * w;
    w = w === 7 ? 2 : w + 1;
  }
  const r = 11 - (sum % 11);
  const dv = r === 11 ? '0' : r === 10 ? 'K' : String(r);
  return dv === (m[2] ?? '').toUpperCase();
}

/** A RUT as the api takes it: no dots, upper-case K. @param {FormDataEntryValue | null} raw */
export const rutApi = (raw) =>
  String(raw ?? '')
    .replace(/\./g, '')
    .trim()
    .toUpperCase();

/**
 * @param {HTMLInputElement} input
 * @param {string} message
 */
function fieldError(input, message) {
  const out = document.getElementById(`${input.id}-error`);
  input.setAttribute('aria-invalid', message ? 'true' : 'false');
  if (out) out.textContent = message || '';
  if (message && out) input.setAttribute('aria-errormessage', out.id);
}

/** @param {HTMLInputElement} input */
export function validateInput(input) {
  const v = input.value.trim();
  if (input.required && !v) return (fieldError(input, 'Campo obligatorio.'), false);
  if (input.hasAttribute('data-rut') && v && !rutOk(v))
    return (fieldError(input, 'RUT inválido: revise el dígito verificador.'), false);
  if (input.hasAttribute('data-fecha') && v && !diaApi(v))
    return (fieldError(input, 'Fecha inválida: use dd-mm-aaaa.'), false);
  if (input.type === 'email' && v && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v))
    return (fieldError(input, 'Correo inválido.'), false);
  if (input.minLength > 0 && v.length < input.minLength)
    return (fieldError(input, `Al menos ${input.minLength} caracteres.`), false);
  fieldError(input, '');
  return true;
}

/** Live validation of every page's inputs. */
export function validateAsTyped() {
  document.addEventListener('input', (e) => {
    const t = e.target;
    if (
      t instanceof HTMLInputElement &&
      t.matches('input[data-rut], input[data-fecha], input[required], input[type=email]')
    )
      validateInput(t);
  });
}

/** @param {HTMLFormElement} form */
const validForm = (form) =>
  [...form.querySelectorAll('input:not([type=checkbox]):not([type=file])')]
    .filter((i) => i instanceof HTMLInputElement)
    .map(validateInput)
    .every(Boolean);

/**
 * Validates the form, then runs the handler with its data (the submit button disabled meanwhile).
 * @param {string} id
 * @param {(form: HTMLFormElement, data: FormData) => unknown} handler
 */
export function onSubmit(id, handler) {
  const form = document.getElementById(id);
  if (!(form instanceof HTMLFormElement)) return;
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearNotice();
    if (!validForm(form)) return notice('error', 'Revise los campos marcados.');
    const button = form.querySelector('button[type=submit]');
    if (button instanceof HTMLButtonElement) button.disabled = true;
    try {
      await handler(form, new FormData(form));
    } finally {
      if (button instanceof HTMLButtonElement) button.disabled = false;
    }
  });
}

/**
 * The trimmed text of a form field ('' when absent).
 * @param {FormData} d
 * @param {string} name
 */
export const text = (d, name) => String(d.get(name) ?? '').trim();
