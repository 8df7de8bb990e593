/* SPDX-License-Identifier: MIT */
/*
 * orrery convert: a trace in one format -> the same trace in another (native, Chrome
 * JSON), or its execution graph as Chakra files.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "orrery/chakra.h"
#include "orrery/native.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery convert [--to native|chrome|chakra] -o OUT TRACE\n\n"
	"Reads TRACE (a Kineto/PyTorch-profiler .json, .json.gz or .json.zst file, an Nsight\n"
	"Systems .sqlite export, a native .orr file, a directory of per-rank files or a run\n"
	"directory, or a .tar/.tar.gz/.tar.zst of them) and writes the same trace as OUT:\n\n"
	"  native   OUT.orr for a one-rank trace, else a run directory OUT/ with rank-R.orr\n"
	"           per rank and manifest.json (`orrery pack` makes one file of it)\n"
	"  chrome   OUT.json: Chrome trace-event JSON as torch.profiler writes it, for\n"
	"           Perfetto (ui.perfetto.dev) or chrome://tracing, every rank in one file;\n"
	"           or a directory OUT/ with rank-R.json per rank (a Kineto file each); both\n"
	"           read back rank by rank\n"
	"  chakra   a directory OUT/ with trace.R.et per rank: the execution graph as\n"
	"           Chakra execution traces (MLCommons Chakra, ASTRA-sim's workload), one\n"
	"           node per CPU call and GPU task, dependencies as data_deps\n\n"
	"Without --to the format follows from OUT: .orr is native, .json is chrome (in any\n"
	"case), '-' is chrome on standard output, any other name is a run directory.  A\n"
	"directory OUT must not exist or be empty, and OUT must not be inside TRACE.  Output\n"
	"is written under a temporary name and renamed when complete; an existing device or\n"
	"FIFO (/dev/null) is written in place, as one file (native for one rank, or --to\n"
	"chrome).\n\n"
	"  -o, --output OUT   what to write (required)\n"
	"  --to FORMAT        native, chrome or chakra (docs/orrery-convert.md)\n"
	"  -h, --help         this help\n";

#define PRODUCER "orrery convert " ORR_VERSION

enum format { FORMAT_UNSET = -1, FORMAT_NATIVE, FORMAT_CHROME, FORMAT_CHAKRA };

static const char *const format_names[] = { "native", "chrome", "chakra" };

struct options {
	int to;
	char *out; /* without trailing slashes */
	const char *in;
	bool out_dir; /* OUT is a directory of per-rank files */
};

/* Suffixes in any case, as the importer reads them. */
static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && strcasecmp(s + n - m, suffix) == 0;
}

/* The format and layout from --to and OUT's name; -1 to go on, else the exit status. */
static int decide_output(struct options *o)
{
	bool orr = ends_with(o->out, ORR_NATIVE_SUFFIX), json = ends_with(o->out, ".json");
	bool std = strcmp(o->out, "-") == 0;

	o->out_dir = !orr && !json && !std && !orr_outfile_is_special(o->out);
	if (o->to == FORMAT_CHAKRA && !o->out_dir)
		return cli_usage_error(
			"convert", "'%s': Chakra files go to a directory, one trace.R.et per rank",
			o->out);
	if (o->to == FORMAT_UNSET)
		o->to = json || std ? FORMAT_CHROME : FORMAT_NATIVE;
	if (orr && o->to == FORMAT_CHROME)
		return cli_usage_error(
			"convert", "'%s': a Chrome trace goes to FILE.json or a directory", o->out);
	if (json && o->to == FORMAT_NATIVE)
		return cli_usage_error(
			"convert", "'%s': a native trace goes to FILE.orr or a directory", o->out);
	return -1;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "to", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!optarg[0])
				return cli_usage_error("convert", "empty output name");
			if (cli_compressed_suffix(optarg))
				return cli_usage_error(
					"convert",
					"-o '%s': orrery writes plain files; name it "
					"without '%s' and compress it afterwards (or "
					"'orrery pack' a run directory)",
					optarg, cli_compressed_suffix(optarg));
			free(o->out);
			o->out = orr_xstrdup(optarg);
			cli_output_arg(optarg);
			for (size_t n = strlen(o->out); n > 1 && o->out[n - 1] == '/'; n--)
				o->out[n - 1] = '\0';
			break;
		case 't':
			if (strcmp(optarg, "native") == 0)
				o->to = FORMAT_NATIVE;
			else if (strcmp(optarg, "chrome") == 0)
				o->to = FORMAT_CHROME;
			else if (strcmp(optarg, "chakra") == 0)
				o->to = FORMAT_CHAKRA;
			else
				return cli_usage_error(
					"convert", "unknown format '%s' (native, chrome or chakra)",
					optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return cli_bad_option("convert", argc, argv, opts);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("convert",
				       optind >= argc ? "no trace given" : "one trace at a time");
	o->in = argv[optind];
	if (!o->out)
		return cli_usage_error("convert", "no output given (-o OUT)");
	return decide_output(o);
}

/* Bytes of a file, or of the regular files directly in a directory. */
static uint64_t size_of(const char *path)
{
	struct stat st;
	struct dirent *de;
	uint64_t total = 0;
	DIR *d;

	if (stat(path, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return (uint64_t)st.st_size;
	d = opendir(path);
	while (d && (de = readdir(d))) {
		char *p = orr_xasprintf("%s/%s", path, de->d_name);

		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
		free(p);
	}
	if (d)
		closedir(d);
	return total;
}

static void write_error(const char *path, int err, const struct orr_diag *d)
{
	cli_error("cannot write '%s': %s%s%s", path, orr_strerror(err), d->msg[0] ? ": " : "",
		  d->msg);
}

static int write_manifest(const char *dir, const struct orr_trace *t, char **names)
{
	size_t n = orr_trace_rank_count(t);
	struct orr_run_file *files = orr_xcalloc(n, sizeof(*files));
	struct timespec now;
	int err;

	clock_gettime(CLOCK_REALTIME, &now);
	for (size_t i = 0; i < n; i++)
		files[i] = orr_run_file_of_rank(t, orr_trace_get_rank(t, i), names[i]);
	err = orr_run_write_manifest(
		dir, &(struct orr_run_manifest){
			     .producer = PRODUCER,
			     .created_unix_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec,
			     .world_size = orr_trace_get_rank(t, 0)->world_size,
			     .skip_steps = -1,
			     .steps = -1,
			     .exit_status = -1,
			     .files = files,
			     .nfiles = n,
		     });
	free(files);
	return err;
}

/* Every rank of the execution graph of t as a Chakra file in tmp. */
static int write_chakra(const struct options *o, const struct orr_trace *t, const char *tmp,
			struct orr_chakra_stats *sum)
{
	struct orr_graph *g = NULL;
	struct orr_diag d;
	size_t failed = 0;
	int err;

	orr_diag_clear(&d);
	if ((err = orr_graph_build(t, NULL, &g, &d))) {
		cli_error("cannot build the execution graph of '%s': %s%s%s", o->in,
			  orr_strerror(err), d.msg[0] ? ": " : "", d.msg);
		return err;
	}
	if ((err = orr_chakra_write_graph(g, tmp, PRODUCER, sum, &failed, &d))) {
		char *final = orr_xasprintf("%s/trace.%d.et", o->out,
					    orr_graph_get_rank(g, failed)->rank->rank);

		write_error(final, err, &d);
		free(final);
	}
	orr_graph_free(g);
	return err;
}

/* One file per rank (and the manifest) in a new directory, renamed to OUT when complete. */
static int write_dir(const struct options *o, const struct orr_trace *t,
		     struct orr_chakra_stats *chakra)
{
	size_t n = orr_trace_rank_count(t);
	char **names = orr_xcalloc(n, sizeof(*names));
	struct orr_outfile out;
	const char *tmp;
	struct orr_diag d;
	int err = 0, ret = EXIT_FAIL;

	orr_diag_clear(&d);
	if ((err = cli_check_out_dir(o->out)) ||
	    (err = orr_outfile_open(&out, o->out, ORR_OUTFILE_DIR))) {
		cli_error("cannot write '%s': %s", o->out,
			  err == -ENOTEMPTY ? "it exists and is not empty" : orr_strerror(err));
		goto out;
	}
	tmp = orr_outfile_dir(&out);
	if (o->to == FORMAT_CHAKRA)
		err = write_chakra(o, t, tmp, chakra);
	for (size_t i = 0; i < n && !err && o->to != FORMAT_CHAKRA; i++) {
		const struct orr_rank *r = orr_trace_get_rank(t, i);
		char *path;

		names[i] = orr_xasprintf("rank-%d%s", r->rank,
					 o->to == FORMAT_NATIVE ? ORR_NATIVE_SUFFIX : ".json");
		path = orr_xasprintf("%s/%s", tmp, names[i]);
		err = o->to == FORMAT_NATIVE ? orr_native_write_rank(path, t, r, PRODUCER, &d)
					     : orr_trace_write_chrome_rank(t, r, path, &d);
		free(path);
		if (err) {
			char *final = orr_xasprintf("%s/%s", o->out, names[i]);

			write_error(final, err, &d);
			free(final);
		}
	}
	if (!err && o->to == FORMAT_NATIVE && (err = write_manifest(tmp, t, names)))
		cli_error("cannot write '%s/%s': %s", o->out, ORR_NATIVE_MANIFEST,
			  orr_strerror(err));
	if (err)
		orr_outfile_abort(&out);
	else if ((err = orr_outfile_commit(&out, false)))
		cli_error("cannot write '%s': %s", o->out, orr_strerror(err));
	else
		ret = EXIT_OK;
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

static int write_file(const struct options *o, const struct orr_trace *t)
{
	struct orr_diag d;
	size_t n = orr_trace_rank_count(t);
	int err;

	orr_diag_clear(&d);
	if (o->to == FORMAT_NATIVE && n != 1) {
		cli_error("cannot write '%s': '%s' has %zu ranks and a native file holds one; "
			  "give a directory",
			  o->out, o->in, n);
		return EXIT_FAIL;
	}
	err = o->to == FORMAT_NATIVE ? orr_native_write_rank(cli_output_path(o->out), t,
							     orr_trace_get_rank(t, 0), PRODUCER, &d)
				     : orr_trace_write_chrome(t, cli_output_path(o->out), &d);
	if (err) {
		write_error(o->out, err, &d);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static void summary(const struct options *o, const struct orr_trace *t,
		    const struct orr_chakra_stats *chakra)
{
	uint64_t in = size_of(o->in), events = 0;
	uint64_t out = strcmp(o->out, "-") ? size_of(o->out) : 0;
	size_t n = orr_trace_rank_count(t);

	for (size_t i = 0; i < n; i++)
		events += orr_trace_get_rank(t, i)->nevents;
	fprintf(stderr, "%s -> %s (%s): %zu rank%s, %llu events, %llu -> %llu bytes",
		cli_text(o->in), cli_output_name(o->out), format_names[o->to], n, n == 1 ? "" : "s",
		(unsigned long long)events, (unsigned long long)in, (unsigned long long)out);
	if (in && out)
		fprintf(stderr, " (%.1fx %s)",
			in >= out ? (double)in / (double)out : (double)out / (double)in,
			in >= out ? "smaller" : "larger");
	fputc('\n', stderr);
	if (o->to != FORMAT_CHAKRA)
		return;
	fprintf(stderr, "  %llu nodes, %llu data deps; %llu collectives, %llu sends, %llu receives",
		(unsigned long long)chakra->nodes, (unsigned long long)chakra->data_deps,
		(unsigned long long)chakra->coll, (unsigned long long)chakra->send,
		(unsigned long long)chakra->recv);
	if (chakra->comm_as_comp)
		fprintf(stderr, "; %llu communication kernels of no known kind as COMP nodes",
			(unsigned long long)chakra->comm_as_comp);
	if (chakra->comm_by_caller)
		fprintf(stderr, "; %llu sized by their calling op",
			(unsigned long long)chakra->comm_by_caller);
	if (chakra->comm_unsized)
		fprintf(stderr, "; %llu without a size", (unsigned long long)chakra->comm_unsized);
	fputc('\n', stderr);
}

int cmd_convert(int argc, char **argv)
{
	struct options o = { .to = FORMAT_UNSET };
	struct orr_trace *t = NULL;
	struct orr_chakra_stats chakra = { 0 };
	int ret;

	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		goto out;
	/* Written into TRACE, OUT would change (or become part of) what it was made from. */
	if (cli_output_inside(o.out, o.in)) {
		cli_error("cannot write '%s': it is inside the trace '%s'; write it elsewhere",
			  o.out, o.in);
		ret = EXIT_FAIL;
		goto out;
	}
	orr_outfile_catch_signals();
	if (cli_import(o.in, &t) < 0) {
		ret = EXIT_FAIL;
		goto out;
	}
	ret = o.out_dir ? write_dir(&o, t, &chakra) : write_file(&o, t);
	if (ret == EXIT_OK)
		summary(&o, t, &chakra);
out:
	orr_trace_free(t);
	free(o.out);
	return ret;
}
