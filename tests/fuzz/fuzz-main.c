/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for libFuzzer's main, so that every build replays the corpus through the
 * fuzz targets:  fuzz-TARGET FILE|DIR...  runs LLVMFuzzerTestOneInput() once on each file
 * (each regular file of a directory, not recursively, in name order).
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "orrery/common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t size = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "fuzz: cannot open '%s': %s\n", path, strerror(errno));
		return 1;
	}
	for (;;) {
		size_t n;

		if (size == cap)
			data = orr_xgrow(data, 1, &cap, size + 65536);
		n = fread(data + size, 1, cap - size, f);
		size += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "fuzz: cannot read '%s'\n", path);
		fclose(f);
		free(data);
		return 1;
	}
	fclose(f);
	/* A copy of exactly size bytes, so that ASan sees any read past the input. */
	uint8_t *exact = orr_xmalloc(size ? size : 1);
	if (size)
		memcpy(exact, data, size);
	free(data);
	fprintf(stderr, "fuzz: %s (%zu bytes)\n", path, size);
	LLVMFuzzerTestOneInput(exact, size);
	free(exact);
	return 0;
}

static int run_dir(const char *path, size_t *count)
{
	struct dirent **names;
	int n = scandir(path, &names, NULL, alphasort), failed = 0;

	if (n < 0) {
		fprintf(stderr, "fuzz: cannot read '%s': %s\n", path, strerror(errno));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		char *file = orr_xasprintf("%s/%s", path, names[i]->d_name);
		struct stat st;

		if (names[i]->d_name[0] != '.' && stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
			failed |= run_file(file);
			(*count)++;
		}
		free(file);
		free(names[i]);
	}
	free(names);
	return failed;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			failed |= run_dir(argv[i], &count);
		} else {
			failed |= run_file(argv[i]);
			count++;
		}
	}
	fprintf(stderr, "fuzz: %zu inputs%s\n", count, failed ? ", some unreadable" : "");
	return failed || count == 0;
}
