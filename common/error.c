/* SPDX-License-Identifier: MIT */
/* The error table and parser diagnostics. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "orrery/common.h"
#include "banned.h"

static const char *const messages[] = {
#define ORR_ERROR_MSG(name, msg) [ORR_##name - ORR_EBASE - 1] = msg,
	ORR_ERRORS(ORR_ERROR_MSG)
#undef ORR_ERROR_MSG
};

static const char *const names[] = {
#define ORR_ERROR_NAME(name, msg) [ORR_##name - ORR_EBASE - 1] = #name,
	ORR_ERRORS(ORR_ERROR_NAME)
#undef ORR_ERROR_NAME
};

static bool is_orr_error(int err)
{
	return err > ORR_EBASE && err < ORR_ELAST;
}

const char *orr_strerror(int err)
{
	if (is_orr_error(err))
		return messages[err - ORR_EBASE - 1];
	if (err < 0)
		return strerror(-err);
	return "success";
}

const char *orr_errname(int err)
{
	if (is_orr_error(err))
		return names[err - ORR_EBASE - 1];
	switch (-err) {
	case 0:
		return "OK";
	case ENOENT:
		return "ENOENT";
	case EACCES:
		return "EACCES";
	case EISDIR:
		return "EISDIR";
	case ENOTDIR:
		return "ENOTDIR";
	case EIO:
		return "EIO";
	case ENOMEM:
		return "ENOMEM";
	case EINVAL:
		return "EINVAL";
	default:
		return "ERRNO";
	}
}

void orr_diag_clear(struct orr_diag *d)
{
	if (!d)
		return;
	d->file[0] = '\0';
	d->msg[0] = '\0';
	d->offset = -1;
	d->event = -1;
}

int orr_diag_set(struct orr_diag *d, int err, const char *file, int64_t offset, int64_t event,
		 const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return err;
	snprintf(d->file, sizeof(d->file), "%s", file ? file : "");
	d->offset = offset;
	d->event = event;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	return err;
}

/*
 * The file and the message come from users and traces: escaped here, so that every
 * report of a diagnostic stays one line that cannot drive the terminal.  Escaping
 * makes a byte four at most.
 */
const char *orr_diag_format(const struct orr_diag *d, int err, char *buf, size_t size)
{
	char where[64] = "", file[sizeof(d->file) * 4], msg[sizeof(d->msg) * 4];

	if (d->offset >= 0 && d->event >= 0)
		snprintf(where, sizeof(where), " at byte %lld (event %lld)", (long long)d->offset,
			 (long long)d->event);
	else if (d->offset >= 0)
		snprintf(where, sizeof(where), " at byte %lld", (long long)d->offset);
	else if (d->event >= 0)
		snprintf(where, sizeof(where), " at event %lld", (long long)d->event);
	orr_text_escape(file, sizeof(file), d->file);
	orr_text_escape(msg, sizeof(msg), d->msg);
	snprintf(buf, size, "%s%s%s%s%s", file[0] ? "'" : "", file, file[0] ? "': " : "",
		 orr_strerror(err), where);
	if (msg[0]) {
		size_t len = strlen(buf);

		snprintf(buf + len, size - len, ": %s", msg);
	}
	return buf;
}
