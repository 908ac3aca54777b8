/**
 * @dte/billing: plans and monthly consumption (issue 32). See README.md.
 */
export {
  FREE_PLAN,
  billingSettings,
  loadBillingSettings,
  parseMonthlyLimit,
  type BillingSettings,
  type MonthlyLimit,
  type SiiEnv,
} from './settings';
export { periodoOf, lastPeriodos } from './period';
export {
  NOTICE_THRESHOLDS,
  chargeDocuments,
  ensureUsageRow,
  freeTierExceeded,
  meterParams,
  meterRefusal,
  meterSql,
  monthlyLimitSql,
  usageOf,
  type MeterKey,
  type MeterKeySql,
} from './metering';
export {
  readBilling,
  HISTORY_MONTHS,
  PAYMENTS_SHOWN,
  type BillingView,
  type EnvironmentUse,
  type Payment,
} from './reads';
export {
  sendPendingNotices,
  noticeMail,
  mesEnPalabras,
  MAX_NOTICE_ATTEMPTS,
  type NoticeMail,
  type SendMail,
} from './notices';
export { consumptionByPlan } from './consumption-metrics';
