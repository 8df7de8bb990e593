/* SPDX-License-Identifier: MIT */
/*
 * orrery record: runs a command with the CUPTI tracer injected into every CUDA process
 * it starts, then says what was captured and writes the run's manifest.
 *
 * The command stays in our process group, so that Ctrl-C on the terminal reaches it
 * (and torchrun's workers) directly.  A signal sent to orrery alone is forwarded, once
 * per signal, and orrery waits for the command to end however long it takes: stopping
 * the job is the job's business (torchrun stops its workers itself), never ours.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "orrery/native.h"
#include "record.h"
#include "banned.h"

static const char usage_text[] =
	"usage: orrery record [-o DIR] [--skip K] [--steps N] [--step-prefix P]\n"
	"                     [--ops nvtx|profiler|none] [-q] [--] COMMAND [ARGS...]\n\n"
	"Runs COMMAND (a training script, torchrun, ...) with orrery's CUPTI tracer injected\n"
	"into every process that uses CUDA; each writes its GPU kernels, copies, CUDA calls,\n"
	"synchronization and NVTX ranges to DIR/rank-R-PID.orr.  Afterwards prints what each\n"
	"process captured and writes DIR/manifest.json.  Exits with COMMAND's status.\n\n"
	"  -o, --output DIR     the run directory (default orrery-run-YYYYmmdd-HHMMSS); it\n"
	"                       must not exist or be empty\n"
	"  --skip K             do not record the first K steps (default 0)\n"
	"  --steps N            then record N steps and stop (default 0: until the end)\n"
	"  --step-prefix P      steps are NVTX ranges named P<n> (default 'ProfilerStep#')\n"
	"  --ops MODE           how orrery_record.enable() records op names and shapes:\n"
	"                       nvtx (emit_nvtx), profiler (a CPU-only torch.profiler) or\n"
	"                       none (ORR_RECORD_OPS; default: nvtx)\n"
	"  -q, --quiet          no summary\n"
	"  -h, --help           this help\n\n"
	"Python scripts can mark steps with orrery_record.step() (docs/orrery-record.md).\n";

/*
 * Set in the parent once the command runs; read by the signal handler.  A signal that
 * arrives before (on another thread while main has them blocked around the fork) is kept
 * in arrived and forwarded once the command runs, by whichever of the handler and main
 * sees both first; forwarded makes it once.  All three through __atomic builtins.
 */
static int child_pid;
static int arrived[NSIG];
static int forwarded[NSIG];

static const int forward_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define NFORWARD (sizeof(forward_signals) / sizeof(forward_signals[0]))

static int parse_count(const char *opt, const char *s, int64_t *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (!s[0] || *end || errno || v < 0 || v > INT32_MAX || s[0] == '+' || s[0] == ' ')
		return cli_usage_error("record", "bad %s '%s' (a number of steps, 0 to 2147483647)",
				       opt, s);
	*ret = v;
	return -1;
}

/* Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct record_options *o)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "skip", required_argument, NULL, 'k' },
		{ "steps", required_argument, NULL, 'n' },
		{ "step-prefix", required_argument, NULL, 'p' },
		{ "ops", required_argument, NULL, 'O' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c, r = -1;

	/* '+': the command's own options are not ours. */
	while (r < 0 && (c = getopt_long(argc, argv, "+o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!optarg[0])
				return cli_usage_error("record", "empty run directory name");
			o->dir = optarg;
			break;
		case 'k':
			r = parse_count("--skip", optarg, &o->skip);
			break;
		case 'n':
			r = parse_count("--steps", optarg, &o->steps);
			break;
		case 'p':
			if (!optarg[0])
				return cli_usage_error("record", "empty --step-prefix");
			if (strlen(optarg) > ORR_RECORD_STEP_PREFIX_MAX)
				/* the tracer would ignore it, orrery_record.step() not */
				return cli_usage_error("record",
						       "bad --step-prefix: %zu bytes (at most %d, "
						       "the tracer's limit)",
						       strlen(optarg), ORR_RECORD_STEP_PREFIX_MAX);
			o->step_prefix = optarg;
			break;
		case 'O':
			if (strcmp(optarg, "nvtx") != 0 && strcmp(optarg, "profiler") != 0 &&
			    strcmp(optarg, "none") != 0)
				return cli_usage_error("record",
						       "bad --ops '%s' (nvtx, profiler or none)",
						       optarg);
			o->ops = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_OK;
		default:
			return cli_bad_option("record", argc, argv, opts);
		}
	}
	if (r >= 0)
		return r;
	if (optind >= argc)
		return cli_usage_error("record", "no command given");
	o->argv = argv + optind;
	o->argc = (size_t)(argc - optind);
	return -1;
}

/* The directories this command made (parents first), to remove when nothing was recorded. */
struct made {
	char **dirs;
	size_t n, cap;
};

static void made_add(struct made *m, const char *dir)
{
	ORR_VEC_PUSH(m->dirs, m->n, m->cap, orr_xstrdup(dir));
}

/* Forgets what was made; with remove, removes it first, deepest first, where empty. */
static void made_release(struct made *m, bool remove)
{
	for (size_t i = m->n; i-- > 0;) {
		if (remove)
			rmdir(m->dirs[i]);
		free(m->dirs[i]);
	}
	free(m->dirs);
	*m = (struct made){ 0 };
}

/* mkdir -p, for the parents of the run directory. */
static int make_parents(const char *dir, struct made *m)
{
	char *p = orr_xstrdup(dir);
	int r = 0;

	for (char *s = strchr(p + 1, '/'); s && !r; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (s[-1] != '/' && mkdir(p, 0777) == 0)
			made_add(m, p);
		else if (s[-1] != '/' && errno != EEXIST)
			r = -errno;
		*s = '/';
	}
	free(p);
	return r;
}

static bool dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool empty = true;

	if (!d)
		return false;
	while (empty && (e = readdir(d)))
		empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/* Creates the run directory (and its parents, in m), or accepts an empty one. */
static int make_run_dir(const char *dir, struct made *m)
{
	struct stat st;
	int err = make_parents(dir, m);

	if (!err && mkdir(dir, 0777) == 0) {
		made_add(m, dir);
		return EXIT_OK;
	}
	if (!err)
		err = -errno;
	if (err == -EEXIST && stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			cli_error("'%s' exists and is not a directory; name the run directory "
				  "with -o",
				  dir);
			return EXIT_FAIL;
		}
		if (!dir_is_empty(dir)) {
			cli_error("'%s' exists and is not empty; name another run directory with "
				  "-o, or remove it",
				  dir);
			made_release(m, true);
			return EXIT_FAIL;
		}
		return EXIT_OK;
	}
	cli_error("cannot create '%s': %s", dir, orr_strerror(err));
	made_release(m, true);
	return EXIT_FAIL;
}

/* Forwards sig if it arrived and the command runs, once: async-signal-safe. */
static void forward(int sig)
{
	int pid = __atomic_load_n(&child_pid, __ATOMIC_SEQ_CST);

	if (pid > 0 && __atomic_load_n(&arrived[sig], __ATOMIC_SEQ_CST) &&
	    !__atomic_exchange_n(&forwarded[sig], 1, __ATOMIC_SEQ_CST))
		kill((pid_t)pid, sig);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	/*
	 * The terminal (SI_KERNEL) signals the whole foreground process group, the
	 * command included: forwarding would deliver it twice.
	 */
	if (si->si_code == SI_KERNEL)
		return;
	__atomic_store_n(&arrived[sig], 1, __ATOMIC_SEQ_CST);
	forward(sig);
}

/* Handlers for the signals not ignored at start (an ignored one stays ignored, for both). */
static void catch_signals(bool *caught)
{
	for (size_t i = 0; i < NFORWARD; i++) {
		struct sigaction sa = { .sa_sigaction = on_signal,
					.sa_flags = SA_SIGINFO | SA_RESTART };
		struct sigaction old;

		caught[i] = false;
		if (sigaction(forward_signals[i], NULL, &old) < 0 || old.sa_handler == SIG_IGN)
			continue;
		sigemptyset(&sa.sa_mask);
		caught[i] = sigaction(forward_signals[i], &sa, NULL) == 0;
	}
}

static void default_signals(const bool *caught)
{
	for (size_t i = 0; i < NFORWARD; i++)
		if (caught[i])
			signal(forward_signals[i], SIG_DFL);
}

/* In the child: exec the command; on failure, tell the parent errno through FD. */
static void exec_child(char **argv, int fd, const bool *caught, const sigset_t *mask)
{
	int err;

	default_signals(caught);
	sigprocmask(SIG_SETMASK, mask, NULL);
	execvp(argv[0], argv);
	err = errno;
	/* If the parent cannot be told, the status (127 or 126) still says it. */
	(void)!write(fd, &err, sizeof(err));
	_exit(err == ENOENT ? 127 : 126);
}

/* The status as a shell gives it: the exit code, or 128 + the signal. */
static int wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 128 + SIGKILL; /* cannot happen: pid is our child */
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/*
 * Runs the command; *ret_status is its status.  Returns EXIT_OK, or EXIT_FAIL when it
 * could not be started (reported; *ret_status is then 127 or 126, as a shell's).
 */
static int run_command(char **argv, int *ret_status)
{
	sigset_t block, old;
	bool caught[NFORWARD];
	int fds[2], err = 0;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		cli_error("cannot run '%s': %s", argv[0], orr_strerror(-errno));
		*ret_status = 126;
		return EXIT_FAIL;
	}
	sigemptyset(&block);
	for (size_t i = 0; i < NFORWARD; i++)
		sigaddset(&block, forward_signals[i]);
	sigprocmask(SIG_BLOCK, &block, &old);
	catch_signals(caught);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		exec_child(argv, fds[1], caught, &old);
	}
	if (pid > 0)
		__atomic_store_n(&child_pid, (int)pid, __ATOMIC_SEQ_CST);
	else
		err = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (size_t i = 0; pid > 0 && i < NFORWARD; i++) /* what another thread took */
		forward(forward_signals[i]);
	close(fds[1]);
	/* EOF when the exec succeeded (the pipe is close-on-exec), else the child's errno. */
	while (pid > 0 && read(fds[0], &err, sizeof(err)) < 0 && errno == EINTR)
		;
	close(fds[0]);
	*ret_status = pid > 0 ? wait_child(pid) : 126;
	__atomic_store_n(&child_pid, 0, __ATOMIC_SEQ_CST);
	default_signals(caught);
	if (!err)
		return EXIT_OK;
	cli_error("cannot run '%s': %s", argv[0], orr_strerror(-err));
	return EXIT_FAIL;
}

static char *default_dir(void)
{
	char name[64];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(name, sizeof(name), "orrery-run-%Y%m%d-%H%M%S", &tm);
	return orr_xstrdup(name);
}

static int64_t unix_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int cmd_record(int argc, char **argv)
{
	struct record_options o = { .skip = -1, .steps = -1, .step_prefix = "ProfilerStep#" };
	struct record_paths paths = { 0 };
	struct record_result res = { .exit_status = -1 };
	char *dir = NULL, *absdir = NULL;
	struct made made = { 0 };
	int ret;

	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		goto out;
	ret = record_find(&paths);
	if (ret != EXIT_OK)
		goto out;
	dir = o.dir ? orr_xstrdup(o.dir) : default_dir();
	o.dir = dir;
	ret = make_run_dir(dir, &made);
	if (ret != EXIT_OK)
		goto out;
	absdir = realpath(dir, NULL);
	if (!absdir) {
		cli_error("cannot resolve '%s': %s", dir, orr_strerror(-errno));
		ret = EXIT_FAIL;
		goto clean;
	}
	record_setenv(&paths, &o, absdir);
	fflush(NULL);
	res.created_unix_ns = unix_now_ns();
	if (run_command(o.argv, &res.exit_status) != EXIT_OK) {
		ret = res.exit_status;
		goto clean;
	}
	orr_outfile_catch_signals();
	ret = record_report(&o, &res);
clean:
	/* Nothing recorded (the report then writes no manifest): leave no trace of the attempt. */
	made_release(&made, dir_is_empty(dir));
out:
	made_release(&made, false);
	record_paths_release(&paths);
	free(absdir);
	free(dir);
	return ret;
}
