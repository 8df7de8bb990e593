/* SPDX-License-Identifier: MIT */
/* orrery pack: a run directory -> one .tar.zst that every command reads like the directory. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "orrery/native.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery pack [-o OUT] RUN\n\n"
	"Packs the run directory RUN (manifest.json and one .orr file per process, as\n"
	"`orrery record` and `orrery convert` write it) into one .tar.zst archive, which every\n"
	"command reads as it reads RUN.  Each .orr file is read first: a file that cannot be\n"
	"read is an error, and nothing is written; so is a symbolic link in RUN.  OUT defaults\n"
	"to RUN.tar.zst and must not be inside RUN; it is written under a temporary name and\n"
	"renamed when complete (a device or FIFO is written in place).\n\n"
	"  -o, --output OUT   the archive to write (default: RUN.tar.zst), compressed as its\n"
	"                     name says: .gz or .tgz gzip, .xz xz, .bz2 bzip2, .tar none,\n"
	"                     any other zstd\n"
	"  -h, --help         this help\n\n"
	"An OUT of '-' is standard output (zstd).\n";

struct options {
	char *run; /* without trailing slashes */
	char *out;
};

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!optarg[0])
				return cli_usage_error("pack", "empty output name");
			if (cli_compressed_suffix(optarg) &&
			    strcmp(cli_compressed_suffix(optarg), ".zip") == 0)
				return cli_usage_error(
					"pack",
					"-o '%s': orrery packs a tar archive; name it "
					".tar.zst, .tar.gz or .tar",
					optarg);
			free(o->out);
			o->out = orr_xstrdup(optarg);
			cli_output_arg(optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return cli_bad_option("pack", argc, argv, opts);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("pack", optind >= argc ? "no run directory given"
							      : "one run directory at a time");
	o->run = orr_xstrdup(argv[optind]);
	for (size_t n = strlen(o->run); n > 1 && o->run[n - 1] == '/'; n--)
		o->run[n - 1] = '\0';
	if (!o->out)
		o->out = orr_xasprintf("%s.tar.zst", o->run);
	return -1;
}

/*
 * Every native file of the run must read: one at a time, so that checking a large run
 * takes the memory of its largest rank only.
 */
static int check_run(const char *run, size_t *ret_files, uint64_t *ret_bytes)
{
	struct orr_import_options opts = { .warn = cli_import_warn };
	struct dirent **ents = NULL;
	int n = scandir(run, &ents, NULL, alphasort), ret = EXIT_OK;
	size_t len = strlen(ORR_NATIVE_SUFFIX);

	*ret_files = 0;
	*ret_bytes = 0;
	if (n < 0) {
		cli_error("cannot read '%s': %s", run, orr_strerror(-errno));
		return EXIT_FAIL;
	}
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		size_t nlen = strlen(name);
		struct orr_trace *t = NULL;
		struct orr_diag d;
		struct stat st;
		char *path;
		int err;

		if (ret != EXIT_OK || name[0] == '.' || nlen <= len ||
		    strcmp(name + nlen - len, ORR_NATIVE_SUFFIX) != 0) {
			free(ents[i]);
			continue;
		}
		path = orr_xasprintf("%s/%s", run, name);
		err = orr_trace_import(path, &opts, &t, &d);
		if (err) {
			cli_import_error(path, err, &d);
			ret = EXIT_FAIL;
		} else if (stat(path, &st) == 0) {
			(*ret_files)++;
			*ret_bytes += (uint64_t)st.st_size;
		}
		orr_trace_free(t);
		free(path);
		free(ents[i]);
	}
	free(ents);
	return ret;
}

int cmd_pack(int argc, char **argv)
{
	struct options o = { 0 };
	struct orr_diag d;
	struct stat st;
	size_t files;
	uint64_t bytes;
	int ret, err;

	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		goto out;
	ret = EXIT_FAIL;
	if (stat(o.run, &st) < 0) {
		cli_error("cannot read '%s': %s", o.run, orr_strerror(-errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_error("cannot pack '%s': not a run directory", o.run);
		goto out;
	}
	if (cli_output_inside(o.out, o.run)) {
		cli_error("cannot write '%s': it is inside the run directory '%s'; write it "
			  "elsewhere",
			  o.out, o.run);
		goto out;
	}
	if (check_run(o.run, &files, &bytes) != EXIT_OK)
		goto out;
	orr_outfile_catch_signals();
	err = orr_run_pack(o.run, cli_output_path(o.out), &d);
	if (err) {
		char buf[1024];

		cli_error("cannot pack %s", orr_diag_format(&d, err, buf, sizeof(buf)));
		goto out;
	}
	if (strcmp(o.out, "-") == 0)
		fprintf(stderr, "%s -> standard output: %zu native file%s, %llu bytes\n",
			cli_text(o.run), files, files == 1 ? "" : "s", (unsigned long long)bytes);
	else if (stat(o.out, &st) == 0)
		fprintf(stderr, "%s -> %s: %zu native file%s, %llu -> %llu bytes\n",
			cli_text(o.run), cli_text(o.out), files, files == 1 ? "" : "s",
			(unsigned long long)bytes, (unsigned long long)st.st_size);
	ret = EXIT_OK;
out:
	free(o.run);
	free(o.out);
	return ret;
}
