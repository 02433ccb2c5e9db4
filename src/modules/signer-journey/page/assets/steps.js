// The steps of the signing panel, one file each under steps/: the requested checks (email and mobile OTP,
// location, face), the fields the signer fills, and the signature itself (Aadhaar at an ESP, a DSC token through the
// bridge, or one request). This module is their one surface for signer.js. Each step returns
// its element; `ctx` connects it to the page:
//   ctx.heading(text)      the step's <h2>, focused when the step appears
//   ctx.refresh(message)   reads the session again and shows whatever comes next
//   ctx.signed(view)       the signature is made; `view` is the session view /sign answered with
//   ctx.onLeave(fn)        cleanup when the step goes away (the camera)
//   ctx.failed(error)      true when the error changed the session (invalid link, conflict): handled there

export { otpCheckStep } from './steps/otp.js';
export { locationStep } from './steps/location.js';
export { faceStep } from './steps/face.js';
export { fieldsStep, focusField, hasFields } from './steps/fields.js';
export { consentSignStep } from './steps/consent-sign.js';
export { aadhaarSignStep, RETURN_PATH_KEY } from './steps/aadhaar.js';
export { dscSignStep } from './steps/dsc.js';
export { declineSection } from './steps/decline.js';

import { t } from './i18n.js';

/** The catalog's key of each step's title (read at render time: the catalog loads after the modules). */
const STEP_TITLE_KEYS = {
  email: 'page.step_email',
  mobile: 'page.step_mobile',
  location: 'page.step_location',
  face: 'page.step_face',
  fields: 'page.step_fields',
};

export function stepTitle(step, signType) {
  if (step === 'sign') {
    return t(signType === 'aadhaar' ? 'page.sign_aadhaar' : signType === 'dsc' ? 'page.sign_dsc' : 'page.sign');
  }
  return STEP_TITLE_KEYS[step] ? t(STEP_TITLE_KEYS[step]) : step;
}
