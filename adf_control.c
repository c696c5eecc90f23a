/* The load controller; see adf_control.h for the rules. */
#include "adf_control.h"

void adf_control_init(adf_control_t *c)
{
    c->raw = 0;
    c->ema = 0;
    c->effort = 1.0;
    c->limited = 0;
    c->over = 0;
    c->primed = 0;
}

void adf_control_update(adf_control_t *c, const adf_control_conf_t *conf,
                        double sample)
{
    double err;

    if (sample < 0) {
        return;
    }
    if (sample > 100) {
        sample = 100;
    }
    c->raw = sample;
    c->ema = c->primed ? ADF_CONTROL_ALPHA * sample
                         + (1 - ADF_CONTROL_ALPHA) * c->ema
                       : sample;
    c->primed = 1;

    if (c->limited) {
        if (sample >= conf->limit_on) {
            return;
        }
        c->limited = 0;
    }
    else if (sample < conf->limit_off) {
        c->over = 0;
    }
    else if (++c->over >= ADF_CONTROL_TRIP) {
        c->over = 0;
        c->limited = 1;
        c->effort *= ADF_CONTROL_BACKOFF;
        return;
    }
    err = conf->target - c->ema;
    if (err > ADF_CONTROL_DEADBAND || err < -ADF_CONTROL_DEADBAND) {
        c->effort += ADF_CONTROL_GAIN * err;
    }
    if (c->effort < 0) {
        c->effort = 0;
    }
    else if (c->effort > 1) {
        c->effort = 1;
    }
}
