/* SPDX-License-Identifier: MIT */
/*
 * One finished rank of a model -> a native file.  Tables are written whole and in
 * order before the events, so every row keeps its index and only string ids change
 * (the trace's -> the file's, looked up once each).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "orrery/native.h"
#include "banned.h"

struct model_writer {
	struct orr_native_writer *w;
	const struct orr_trace *t;
	const struct orr_rank *r;
	uint32_t *ids; /* the trace's string id -> the file's, 0 = not yet */
	size_t nids;
};

static int str(struct model_writer *mw, uint32_t id, uint32_t *ret)
{
	const char *s;
	int r;

	if (id == ORR_STR_NONE || id >= mw->nids) {
		*ret = ORR_STR_NONE;
		return 0;
	}
	if (mw->ids[id]) {
		*ret = mw->ids[id];
		return 0;
	}
	s = orr_trace_str(mw->t, id);
	if ((r = orr_native_writer_string(mw->w, s, strlen(s), ret)))
		return r;
	mw->ids[id] = *ret;
	return 0;
}

static const char *str_or_null(const struct orr_trace *t, uint32_t id)
{
	return id == ORR_STR_NONE ? NULL : orr_trace_str(t, id);
}

static int write_places(struct model_writer *mw)
{
	for (size_t i = 0; i < mw->r->nplaces; i++) {
		struct orr_place p = mw->r->places[i];
		uint32_t index;
		int r;

		if ((r = str(mw, p.name, &p.name)) ||
		    (r = orr_native_writer_place(mw->w, &p, &index)))
			return r;
	}
	return 0;
}

static int write_ops(struct model_writer *mw)
{
	const struct orr_rank *rk = mw->r;
	struct orr_native_input *in = NULL;
	size_t cap = 0;
	int r = 0;

	for (size_t i = 0; i < rk->nops && !r; i++) {
		const struct orr_op_args *op = &rk->ops[i];
		uint32_t index;

		if (op->ninputs > cap)
			in = orr_xgrow(in, sizeof(*in), &cap, op->ninputs);
		for (uint32_t k = 0; k < op->ninputs && !r; k++) {
			const struct orr_input *x = &rk->inputs[op->first_input + k];

			in[k] = (struct orr_native_input){
				.dims = rk->dims + x->first_dim,
				.ndims = x->ndims,
				.is_list = x->is_list != 0,
				.strides = x->nstrides ? rk->strides + x->first_stride : NULL,
				.nstrides = x->nstrides
			};
			r = str(mw, x->dtype, &in[k].dtype);
		}
		if (!r)
			r = orr_native_writer_op(mw->w, op->sequence, in, op->ninputs, &index);
	}
	free(in);
	return r;
}

static int write_copies_syncs(struct model_writer *mw)
{
	uint32_t index;
	int r;

	for (size_t i = 0; i < mw->r->nkernels; i++)
		if ((r = orr_native_writer_kernel(mw->w, &mw->r->kernels[i], &index)))
			return r;
	for (size_t i = 0; i < mw->r->ncopies; i++)
		if ((r = orr_native_writer_copy(mw->w, &mw->r->copies[i], &index)))
			return r;
	for (size_t i = 0; i < mw->r->nsyncs; i++)
		if ((r = orr_native_writer_sync(mw->w, &mw->r->syncs[i], &index)))
			return r;
	return 0;
}

/* The members from first on; NULL where the rank has none (no offset on a null pointer). */
static const int32_t *members_of(const struct orr_rank *rk, size_t first)
{
	return rk->members ? rk->members + first : NULL;
}

static int write_collectives(struct model_writer *mw)
{
	const struct orr_rank *rk = mw->r;
	uint32_t index;
	int r;

	for (size_t i = 0; i < rk->ncollectives; i++) {
		struct orr_collective c = rk->collectives[i];

		if ((r = str(mw, c.type, &c.type)) || (r = str(mw, c.dtype, &c.dtype)) ||
		    (r = str(mw, c.pg_name, &c.pg_name)) || (r = str(mw, c.pg_desc, &c.pg_desc)) ||
		    (r = orr_native_writer_collective(mw->w, &c, members_of(rk, c.first_member),
						      c.nmembers, &index)))
			return r;
	}
	for (size_t i = 0; i < rk->ncomms; i++) {
		struct orr_comm c = rk->comms[i];

		if ((r = str(mw, c.name, &c.name)) || (r = str(mw, c.desc, &c.desc)) ||
		    (r = str(mw, c.backend, &c.backend)) ||
		    (r = orr_native_writer_comm(mw->w, &c, members_of(rk, c.first_member),
						c.nmembers)))
			return r;
	}
	for (size_t i = 0; i < rk->nskipped; i++) {
		uint32_t category;

		if ((r = str(mw, rk->skipped[i].category, &category)) ||
		    (r = orr_native_writer_skipped(mw->w, category, rk->skipped[i].count)))
			return r;
	}
	return 0;
}

static int write_events(struct model_writer *mw, size_t *ret_failed)
{
	for (size_t i = 0; i < mw->r->nevents; i++) {
		struct orr_event e = mw->r->events[i];
		int r;

		if ((r = str(mw, e.name, &e.name)) || (r = orr_native_writer_event(mw->w, &e))) {
			*ret_failed = i;
			return r;
		}
	}
	return 0;
}

static int open_writer(const char *path, const struct orr_trace *t, const struct orr_rank *r,
		       const char *producer, struct orr_native_writer **ret_w)
{
	struct orr_native_device *devs = orr_xcalloc(r->ndevices + 1, sizeof(*devs));
	struct orr_native_header h = {
		.rank = r->rank,
		.world_size = r->world_size,
		.local_rank = r->local_rank,
		.pid = r->pid,
		.host = str_or_null(t, r->host),
		.producer = producer,
		.clock_source = str_or_null(t, r->clock_source),
		.source = str_or_null(t, r->source),
		.backend = str_or_null(t, r->backend),
		.base_time_ns = r->base_time_ns,
		.cupti_version = r->cupti_version,
		.cuda_driver_version = r->cuda_driver_version,
		.cuda_runtime_version = r->cuda_runtime_version,
		.devices = devs,
		.ndevices = r->ndevices,
	};
	int err;

	for (size_t i = 0; i < r->ndevices; i++)
		devs[i] = (struct orr_native_device){
			.id = r->devices[i].id,
			.name = str_or_null(t, r->devices[i].name),
			.num_sms = r->devices[i].num_sms,
			.compute_major = r->devices[i].compute_major,
			.compute_minor = r->devices[i].compute_minor,
			.total_mem_bytes = r->devices[i].total_mem_bytes,
		};
	err = orr_native_writer_open(path, &h, NULL, ret_w);
	free(devs);
	return err;
}

int orr_native_write_rank(const char *path, const struct orr_trace *t, const struct orr_rank *r,
			  const char *producer, struct orr_diag *reterr_diag)
{
	struct model_writer mw = { .t = t, .r = r, .nids = orr_strtab_count(t->strs) };
	const struct orr_native_counts counts = {
		.dropped_records = r->dropped_records,
		.dropped_events = r->dropped_events,
		.nflows = r->nflows,
		.first_step = r->first_step,
		.last_step = r->last_step,
	};
	size_t failed = SIZE_MAX;
	int err;

	orr_diag_clear(reterr_diag);
	if ((err = open_writer(path, t, r, producer, &mw.w)))
		return orr_diag_set(reterr_diag, err, path, -1, -1, "cannot create the file");
	mw.ids = orr_xcalloc(mw.nids, sizeof(*mw.ids));
	if ((err = write_places(&mw)) || (err = write_ops(&mw)) ||
	    (err = write_copies_syncs(&mw)) || (err = write_collectives(&mw)) ||
	    (err = write_events(&mw, &failed))) {
		orr_native_writer_abort(mw.w);
		if (err == -EINVAL && failed != SIZE_MAX)
			err = orr_diag_set(reterr_diag, err, path, -1, (int64_t)failed,
					   "the native format does not take this event");
		else
			err = orr_diag_set(reterr_diag, err, path, -1, -1, "cannot write");
	} else if ((err = orr_native_writer_close(mw.w, &counts))) {
		err = orr_diag_set(reterr_diag, err, path, -1, -1, "cannot write");
	}
	free(mw.ids);
	return err;
}
