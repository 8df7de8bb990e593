/* SPDX-License-Identifier: MIT */
/*
 * What a file is before it is read: by its name (a trace's, a compressed JSON file's, a
 * hidden archive member's) and by its first bytes (a container libarchive opens), and
 * why a container's header is not valid.  For import.c.
 */
#include <string.h>
#include <strings.h>

#include "import.h"
#include "orrery/native.h"
#include "banned.h"

bool orr__import_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* A run directory's manifest is for people: the files carry their own headers. */
bool orr__import_is_trace_name(const char *name)
{
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	if (strcmp(base, ORR_NATIVE_MANIFEST) == 0)
		return false;
	return orr__import_ends_with(name, ".json") || orr__import_ends_with(name, ".json.gz") ||
	       orr__import_ends_with(name, ".json.zst") ||
	       orr__import_ends_with(name, ".json.zstd") ||
	       orr__import_ends_with(name, ORR_NATIVE_SUFFIX) ||
	       orr__import_ends_with(name, ".sqlite") ||
	       orr__import_ends_with(name, ".sqlite.gz") ||
	       orr__import_ends_with(name, ".sqlite.zst");
}

/* A compressed JSON file by its name: one stream, never a tar archive. */
bool orr__import_is_compressed_json_name(const char *name)
{
	return orr__import_ends_with(name, ".json.gz") ||
	       orr__import_ends_with(name, ".json.zst") ||
	       orr__import_ends_with(name, ".json.zstd") ||
	       orr__import_ends_with(name, ".json.xz") || orr__import_ends_with(name, ".json.bz2");
}

/*
 * A member named .x, or inside a directory named .x: hidden, as a directory's dot files
 * are (macOS puts ._NAME AppleDouble files beside every file it archives).
 */
bool orr__import_is_hidden_member(const char *path)
{
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");

		if (p[0] == '.' && !(n == 1 || (n == 2 && p[1] == '.')))
			return true;
		p += n;
		p += *p == '/';
	}
	return false;
}

/* gzip, zstd, xz, bzip2 or tar: anything libarchive must open for us. */
const char *orr__import_container_kind(const unsigned char *p, size_t n)
{
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return "gzip";
	if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
		return "zstd";
	if (n >= 6 && memcmp(p,
			     "\xfd"
			     "7zXZ",
			     5) == 0)
		return "xz";
	if (n >= 3 && memcmp(p, "BZh", 3) == 0)
		return "bzip2";
	if (n >= 262 && memcmp(p + 257, "ustar", 5) == 0)
		return "tar";
	return NULL;
}

/* Why libarchive took a container's first bytes for none of its formats. */
int orr__import_container_fail(struct import_ctx *c, const char *name, const unsigned char *p,
			       size_t n)
{
	const char *kind = orr__import_container_kind(p, n);

	if (strcmp(kind, "gzip") == 0 && n >= 3 && p[2] != 8)
		return orr_diag_set(c->diag, ORR_EARCHIVE, name, 2, -1,
				    "a gzip header with compression method %u (expected 8, "
				    "deflate)",
				    p[2]);
	if (strcmp(kind, "tar") == 0 && n >= 512) {
		unsigned sum = 0, want = 0;

		for (size_t i = 0; i < 512; i++)
			sum += i >= 148 && i < 156 ? ' ' : p[i];
		for (size_t i = 148; i < 156 && p[i] >= '0' && p[i] <= '7'; i++)
			want = want * 8 + (unsigned)(p[i] - '0');
		if (sum != want)
			return orr_diag_set(c->diag, ORR_EARCHIVE, name, 148, -1,
					    "a tar header whose checksum does not match its "
					    "bytes");
	}
	return orr_diag_set(c->diag, ORR_EARCHIVE, name, 0, -1,
			    "starts like a %s stream, but its header is not valid", kind);
}
