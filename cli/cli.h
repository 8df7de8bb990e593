/* SPDX-License-Identifier: MIT */
/*
 * cli/cli.h — what the command files share: the command entry points, error
 * reporting (once, by the command), and the JSON/CSV/text output helpers.
 */
#ifndef ORRERY_CLI_H
#define ORRERY_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "orrery/common.h"

/* Exit codes. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

int cmd_info(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_critical_path(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_compose(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_record(int argc, char **argv);

/* OPENBLAS_NUM_THREADS as it was before orrery set it to 1 (cli/orrery.c), for a child. */
void cli_blas_threads_restore(void);

/*
 * "orrery: error: ..." on stderr, one line: the message is escaped as text
 * (orr_text_escape()), so that names and paths in it cannot break the line or drive
 * the terminal.
 */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "orrery: warning: ..." on stderr, escaped in the same way. */
void cli_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An orr_import_options.warn callback that prints the message with cli_warning(). */
void cli_import_warn(void *data, const char *msg);
/*
 * On a terminal, progress of a long phase on stderr (cli/progress.c).  An import of
 * path: cli_import_progress() sets o's progress callback (and --step-range).  A graph build or a replay:
 * cli_progress_begin() names the phase and what it counts (events, tasks), and
 * cli_progress_count is the callback for orr_graph_options and orr_replay_options.
 * cli_progress_done() ends either and clears the line.
 */
struct orr_import_options;
void cli_import_progress(struct orr_import_options *o, const char *path);
/*
 * orrery --step-range GLOB and --et ET: every import's step_range and et_path
 * (cli_import_progress() sets them).
 */
extern const char *cli_step_range, *cli_et_path;
void cli_progress_begin(const char *what, const char *unit);
/* The same with a bar, shown at once and even off a terminal when force. */
void cli_progress_begin_forced(const char *what, const char *unit, bool force);
void cli_progress_count(void *data, uint64_t done, uint64_t total);
void cli_progress_done(void);
/* Seconds on the monotonic clock. */
double cli_now_s(void);
/* orr_graph_build() and orr_replay_run() with that progress; opts may be NULL. */
struct orr_trace;
struct orr_graph;
struct orr_graph_options;
struct orr_replay;
struct orr_replay_options;
struct orr_diag;
int cli_graph_build(const struct orr_trace *t, const struct orr_graph_options *opts,
		    struct orr_graph **ret, struct orr_diag *d);
int cli_replay_run(const struct orr_graph *g, const struct orr_replay_options *opts,
		   struct orr_replay **ret, struct orr_diag *d);
/*
 * The file to import for PATH (cli/input.c): PATH itself, or for "-" a copy of standard
 * input that has no name (read back as /proc/self/fd/N, in *ret_tmp too), made only
 * when its first bytes are a format orrery reads and bounded by the import's file limit;
 * cli_input_done() closes (so removes) it after the import, and iopts names it
 * "standard input" for the ranks it gives.  0, or -1 after reporting why standard input
 * cannot be read.
 */
int cli_input(const char *path, struct orr_import_options *iopts, const char **ret_path,
	      char **ret_tmp);
void cli_input_done(char *tmp);
/*
 * The name the import knows standard input's copy by ("" when none), and s with that
 * name replaced by "standard input" (in buf when anything changes; cli/output.c).
 */
extern char cli_stdin_copy[32];
const char *cli_input_name(const char *s, char *buf, size_t size);
/*
 * The whole import of PATH ('-' too) with progress and import warnings, reported once
 * on failure: 0, or -1 after reporting.
 */
int cli_import(const char *path, struct orr_trace **ret);
/* Reports a failed import with its diagnostic, once. */
void cli_import_error(const char *path, int err, const struct orr_diag *diag);
/*
 * Prints one line, "orrery: error: ...; see 'orrery CMD --help'" ('orrery --help' when cmd
 * is NULL: orrery's own options), and returns EXIT_USAGE.
 */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * ".gz", ".zst", ... when an output's name says it is compressed or an archive: orrery
 * writes plain files, and refuses such a name rather than write plain bytes under it.
 */
const char *cli_compressed_suffix(const char *path);
/*
 * An output given as '-' is standard output.  cli_output_arg(), called on the option's
 * argument as it is parsed, moves standard output aside for that file and sends what
 * the command prints (its report) to standard error, so that standard output carries
 * the file alone; cli_output_path() is the name to open the output by ("/dev/fd/N" for
 * '-', else the argument itself).  Messages name the argument.
 */
void cli_output_arg(const char *arg);
const char *cli_output_path(const char *arg);
/* 0 when a directory output may be written at out: it does not exist or is empty
 * (rename() replaces an empty one); else -ENOTEMPTY, -ENOTDIR or -errno. */
int cli_check_out_dir(const char *out);
/* orr_outfile_inside() for an output argument: standard output is inside no trace. */
bool cli_output_inside(const char *arg, const char *trace);
/* An output argument for a message: "standard output" for '-', else escaped. */
const char *cli_output_name(const char *arg);
struct option;
/*
 * The same for the option getopt_long() just refused (opterr is 0: it printed nothing),
 * with opts its table (may be NULL): a prefix of several of its names lists them.
 */
int cli_bad_option(const char *cmd, int argc, char **argv, const struct option *opts);
/*
 * -1 when arg ("--NAME" or "--NAME=VALUE", as typed) names one option of opts, exactly or
 * as the prefix of one name; else the usage error listing the names it begins (getopt_long()
 * takes a prefix of several options of one value and flag for the first of them).
 */
int cli_ambiguous_option(const char *cmd, const char *arg, const struct option *opts);
/*
 * The long option getopt_long() just returned, as typed: the last word read, or the one
 * before it when that was the option's value (with_value: --tp 4; --tp=4 is one word).
 */
const char *cli_typed_option(int argc, char **argv, bool with_value);

enum cli_format { CLI_FORMAT_TEXT, CLI_FORMAT_JSON, CLI_FORMAT_CSV };
/* A CSV text cell on standard output, as orr_csv_write_field() writes it. */
void cli_csv_field(const char *s);
/* Parses "text", "json" or "csv" (csv only when allow_csv); -1 if unknown. */
int cli_parse_format(const char *s, bool allow_csv);
/* A decimal count from 0 to INT32_MAX, the whole of s, into *ret; -1 otherwise. */
int cli_parse_count(const char *s, int64_t *ret);
/*
 * A decimal number (digits, '.', an exponent; no hexadecimal, blanks, inf or nan) from lo
 * to hi, the whole of s, into *ret; -1 otherwise.
 */
int cli_parse_real(const char *s, double lo, double hi, double *ret);

/*
 * The commands' JSON, written by liborrery's writer (struct orr_json_out, orrery/common.h)
 * through these functions of cli/output.c.
 */
struct json_out {
	struct orr_json_out o;
};

void json_begin(struct json_out *j, FILE *f);
void json_end(struct json_out *j);
void json_object(struct json_out *j, const char *key);
void json_array(struct json_out *j, const char *key);
void json_close_object(struct json_out *j);
void json_close_array(struct json_out *j);
void json_str(struct json_out *j, const char *key, const char *value);
void json_int(struct json_out *j, const char *key, int64_t value);
void json_bool(struct json_out *j, const char *key, bool value);
/* "%.6g"; null when value is NaN or infinite, so that the output stays JSON. */
void json_double(struct json_out *j, const char *key, double value);
/* As json_double(), with the digits that read back as value exactly (up to 17). */
void json_double_exact(struct json_out *j, const char *key, double value);
/* S as a quoted, escaped JSON string, for writers that lay out their own JSON. */
void json_write_string(FILE *f, const char *s);

/* What a graph holds (cli/graph-summary.c): text, or the "graph" object of the JSON. */
struct orr_graph_stats;
void cli_graph_text(const struct orr_graph_stats *st);
void cli_graph_json(struct json_out *j, const struct orr_graph_stats *st);

/*
 * S for a text report: S itself when it holds nothing to escape, else its escaped
 * copy (orr_text_escape()), valid until eight more copies have been made: enough for
 * the arguments of one printf().  Every name from a trace and every path goes through
 * it before it reaches the terminal.
 */
const char *cli_text(const char *s);

/* Milliseconds with three decimals from nanoseconds, e.g. "345.823". */
const char *cli_ms(int64_t ns, char *buf, size_t size);

/*
 * S on standard output in `width` columns, right-aligned (printf's "%*s"), or
 * left-aligned when width is negative ("%-*s"); a longer S is written whole.  For the
 * rows a report may have millions of: every printf of this process takes glibc's slow
 * path (cli_ms()).
 */
void cli_put_cell(const char *s, int width);

#endif
