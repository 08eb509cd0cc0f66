/* ferry doctor: the results list, which every check appends to. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "doctor_int.h"

const char *ferry_check_status_name(enum ferry_check_status s)
{
	switch (s) {
	case FERRY_CHECK_PASS:
		return "pass";
	case FERRY_CHECK_WARN:
		return "warn";
	case FERRY_CHECK_FAIL:
		return "fail";
	case FERRY_CHECK_INFO:
		return "info";
	}
	return "?";
}

struct ferry_check *ferry__doctor_add(struct ferry__doctor *d,
				      enum ferry_check_status st,
				      const char *fmt, ...)
{
	struct ferry_check *c = &d->spare;
	va_list ap;

	if (d->n < d->max)
		c = &d->out[d->n++];
	else
		d->overflow = true;
	memset(c, 0, sizeof(*c));
	c->status = st;
	va_start(ap, fmt);
	vsnprintf(c->name, sizeof(c->name), fmt, ap);
	va_end(ap);
	return c;
}

void ferry__doctor_value(struct ferry_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->value, sizeof(c->value), fmt, ap);
	va_end(ap);
}

void ferry__doctor_fix(struct ferry_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->fix, sizeof(c->fix), fmt, ap);
	va_end(ap);
}
