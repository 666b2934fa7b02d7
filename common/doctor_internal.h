/* What the doctor's three files share and nothing else uses (doctor.h is the public header):
 * doctor.c measures and calls the rules, doctor_rules.c judges, doctor_report.c prints. */
#ifndef UF_DOCTOR_INTERNAL_H
#define UF_DOCTOR_INTERNAL_H

#include "doctor.h"

/* A value for the evidence text: "n/a" where it was not measured. */
typedef struct uf_doctor_num_text {
    char s[32];
} uf_doctor_num_text;

/* v with `decimals` decimals, or "n/a" when NaN (doctor_rules.c). */
uf_doctor_num_text uf_doctor_num(double v, int decimals);

/* Every rule over d's figures: share, verdict and evidence of each finding (doctor_rules.c). */
void uf_doctor_apply_rules(uf_diagnosis *d);

/* d->order: high before moderate before none before cannot tell, larger share first. */
void uf_doctor_order_findings(uf_diagnosis *d);

#endif
