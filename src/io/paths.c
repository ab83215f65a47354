/*
 * paths.c - expand files, directories and globs into a sorted file list.
 *
 * "Every command accepts files or a run directory": this is the one place
 * that decides what a directory contributes, so all commands agree.
 */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "trainscope/paths.h"

void ts_paths_init(struct ts_paths *p)
{
	memset(p, 0, sizeof(*p));
}

void ts_paths_release(struct ts_paths *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

const char *ts_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int64_t ts_rank_in_name(const char *path)
{
	for (const char *p = ts_basename(path); *p; p++) {
		const char *q = p + 4;
		int64_t v = 0;
		int d = 0;

		if ((p[0] | 0x20) != 'r' || (p[1] | 0x20) != 'a' || (p[2] | 0x20) != 'n' ||
		    (p[3] | 0x20) != 'k')
			continue;
		if (*q == '-' || *q == '_')
			q++;
		while (*q >= '0' && *q <= '9' && d < 7)
			v = v * 10 + (*q++ - '0'), d++;
		if (d)
			return v;
	}
	return -1;
}

static int push(struct ts_paths *p, const char *s)
{
	char *copy = strdup(s);

	if (!copy || ts_grow((void **)&p->v, &p->cap, p->n + 1, sizeof(*p->v))) {
		free(copy);
		return TS_ENOMEM;
	}
	p->v[p->n++] = copy;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_dir(struct ts_paths *p, const char *dir, int depth, struct ts_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t first = p->n;
	int rc = 0;

	if (!d)
		return ts_err_at(err, TS_EIO, dir, -1, -1, "cannot open directory: %s",
				 strerror(errno));
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		char *full;
		size_t n;

		if (e->d_name[0] == '.')
			continue;
		n = strlen(dir) + strlen(e->d_name) + 2;
		full = malloc(n);
		if (!full) {
			rc = TS_ENOMEM;
			break;
		}
		snprintf(full, n, "%s%s%s", dir,
			 dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name);
		if (stat(full, &st) == 0) {
			if (S_ISREG(st.st_mode))
				rc = push(p, full);
			else if (S_ISDIR(st.st_mode) && depth > 0)
				rc = add_dir(p, full, depth - 1, err);
		}
		free(full);
		if (rc)
			break;
	}
	closedir(d);
	if (!rc && p->n > first)
		ts_sort(p->v + first, p->n - first, sizeof(*p->v), cmp_str);
	return rc;
}

int ts_paths_add(struct ts_paths *p, const char *arg, int depth, struct ts_err *err)
{
	struct stat st;

	if (strcmp(arg, "-") == 0)
		return push(p, arg);
	if (stat(arg, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return add_dir(p, arg, depth, err);
		return push(p, arg);
	}
	if (strpbrk(arg, "*?[")) {
		glob_t g;
		int rc = glob(arg, 0, NULL, &g);
		if (rc == GLOB_NOMATCH) {
			globfree(&g);
			return ts_err_at(err, TS_EIO, arg, -1, -1, "pattern matches no file");
		}
		if (rc) {
			globfree(&g);
			return ts_err_at(err, TS_EIO, arg, -1, -1, "cannot expand pattern");
		}
		for (size_t i = 0; i < g.gl_pathc && !rc; i++)
			rc = push(p, g.gl_pathv[i]);
		globfree(&g);
		return rc;
	}
	return ts_err_at(err, TS_EIO, arg, -1, -1, "cannot open: %s", strerror(errno));
}
