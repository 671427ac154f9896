/*
 * dirstore.c — directory object stores: objects as files under a server
 * directory, for those who want export files next to the database (as COPY
 * ... TO a file does).
 *
 * The directory must lie inside the administrator's dynindex.exchange_directory
 * (checked with the real paths, at configuration and at every use).  A key is
 * a relative path; it is opened one component at a time with openat() and
 * O_NOFOLLOW, and components "", "." and ".." are refused, so neither ".."
 * nor a symbolic link planted anywhere below the directory leads out of it.
 * Objects are written to a hidden temporary file renamed into place at
 * close, so a reader never sees half an object.
 */
#include "postgres.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "exchange/objstore_int.h"

#define TMP_PREFIX ".dynindex-tmp-"

/* realpath() into palloc'd memory, or NULL. */
static char *
real_path(const char *path)
{
	char	   *r = realpath(path, NULL);
	char	   *out;

	if (r == NULL)
		return NULL;
	out = pstrdup(r);
	free(r);
	return out;
}

/* The real path of dynindex.exchange_directory (relative: to the data directory), or NULL. */
static char *
exchange_root(void)
{
	if (dynindex_exchange_directory == NULL || dynindex_exchange_directory[0] == '\0')
		return NULL;
	return real_path(dynindex_exchange_directory);
}

/* Refuse a directory outside dynindex.exchange_directory. */
void
DynDirCheckPath(const char *directory)
{
	char	   *root = exchange_root();
	char	   *real;
	size_t		n;

	if (root == NULL)
		DynObjFail(DYN_OBJ_ACCESS_DENIED,
				   "Directory object stores are disabled: dynindex.exchange_directory is not set to an existing directory");
	if ((real = real_path(directory)) == NULL)
		DynObjFail(DYN_OBJ_NO_SUCH_BUCKET, "The specified bucket does not exist");
	n = strlen(root);
	if (strncmp(real, root, n) != 0 || (real[n] != '\0' && real[n] != '/' && strcmp(root, "/") != 0))
		DynObjFail(DYN_OBJ_ACCESS_DENIED,
				   "Access Denied: the store's directory is not inside dynindex.exchange_directory");
}

/* Close a descriptor, keeping errno. */
static void
close_quietly(int fd)
{
	int			save = errno;

	if (fd >= 0)
		close(fd);
	errno = save;
}

/* A component of a key is a plain name. */
static bool
component_ok(const char *c, size_t len)
{
	if (len == 0 || len > 255)
		return false;
	if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
		return false;
	if (len >= strlen(TMP_PREFIX) && strncmp(c, TMP_PREFIX, strlen(TMP_PREFIX)) == 0)
		return false;
	return true;
}

/* Raise the failure of a system call on an object. */
static void
fail_errno(const char *what)
{
	if (errno == EACCES || errno == EPERM || errno == ELOOP || errno == ENOTDIR)
		DynObjFail(DYN_OBJ_ACCESS_DENIED, "Access Denied (%s: %m)", what);
	if (errno == ENOENT)
		DynObjFail(DYN_OBJ_NO_SUCH_KEY, "The specified key does not exist.");
	DynObjFail(DYN_OBJ_UNAVAILABLE, "Could not %s: %m", what);
}

/*
 * Open the directory holding a key's object (creating the directories on the
 * way if create) and return its descriptor; *name gets the last component.
 */
static int
open_parent(DynObjStore *s, const char *key, bool create, char **name)
{
	int			fd;
	const char *p = key;

	DynDirCheckPath(s->directory);
	fd = open(s->directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		fail_errno("open the store's directory");
	for (;;)
	{
		const char *slash = strchr(p, '/');
		size_t		len = slash ? (size_t) (slash - p) : strlen(p);
		char	   *comp = pnstrdup(p, len);
		int			next;

		if (!component_ok(p, len))
		{
			close_quietly(fd);
			DynObjFail(DYN_OBJ_ACCESS_DENIED, "Access Denied: a key of a directory store is a path of plain names");
		}
		if (slash == NULL)
		{
			*name = comp;
			return fd;
		}
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create)
		{
			if (mkdirat(fd, comp, 0750) < 0 && errno != EEXIST)
			{
				close_quietly(fd);
				fail_errno("create a directory");
			}
			next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		close_quietly(fd);
		if (next < 0)
			fail_errno("open a directory");
		fd = next;
		p = slash + 1;
	}
}

/* Write all of a buffer. */
static void
write_all(int fd, const char *data, size_t len)
{
	while (len > 0)
	{
		ssize_t		n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail_errno("write a file");
		data += n;
		len -= n;
	}
}

/* Memory context reset: release what an interrupted writer holds. */
static void
writer_cleanup(void *arg)
{
	DynObjWriter *w = arg;

	if (w->fd >= 0)
		close(w->fd);
	if (!w->done && w->dirfd >= 0 && w->tmpname)
		unlinkat(w->dirfd, w->tmpname, 0);
	if (w->dirfd >= 0)
		close(w->dirfd);
	w->fd = w->dirfd = -1;
}

void
DynDirWriterInit(DynObjWriter *w)
{
	MemoryContextCallback *cb = palloc0(sizeof(MemoryContextCallback));

	w->dirfd = -1;
	w->fd = -1;
	cb->func = writer_cleanup;
	cb->arg = w;
	MemoryContextRegisterResetCallback(GetMemoryChunkContext(w), cb);
	w->dirfd = open_parent(w->store, w->key, true, &w->name);
	w->tmpname = psprintf(TMP_PREFIX "%d-%s", MyProcPid, w->name);
	if (strlen(w->tmpname) > 255)
		w->tmpname = psprintf(TMP_PREFIX "%d", MyProcPid);
	unlinkat(w->dirfd, w->tmpname, 0);
	w->fd = openat(w->dirfd, w->tmpname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (w->fd < 0)
		fail_errno("create a file");
}

void
DynDirWrite(DynObjWriter *w, const char *data, size_t len)
{
	write_all(w->fd, data, len);
}

void
DynDirWriterClose(DynObjWriter *w)
{
	if (fsync(w->fd) < 0)
		fail_errno("sync a file");
	if (close(w->fd) < 0)
	{
		w->fd = -1;
		fail_errno("close a file");
	}
	w->fd = -1;
	if (renameat(w->dirfd, w->tmpname, w->dirfd, w->name) < 0)
		fail_errno("rename a file");
	w->done = true;
	close_quietly(w->dirfd);
	w->dirfd = -1;
}

void
DynDirWriterAbort(DynObjWriter *w)
{
	w->done = false;
	writer_cleanup(w);
	w->done = true;
}

void
DynDirPut(DynObjStore *s, const char *key, const char *data, size_t len)
{
	DynObjWriter *w = DynObjWriterOpen(s, key);

	DynObjWrite(w, data, len);
	DynObjWriterClose(w);
}

/* Memory context reset: close a reader's file. */
static void
reader_cleanup(void *arg)
{
	DynObjReader *r = arg;

	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

void
DynDirReaderInit(DynObjReader *r)
{
	MemoryContextCallback *cb = palloc0(sizeof(MemoryContextCallback));
	char	   *name;
	int			dirfd;
	struct stat st;

	cb->func = reader_cleanup;
	cb->arg = r;
	MemoryContextRegisterResetCallback(GetMemoryChunkContext(r), cb);
	dirfd = open_parent(r->store, r->key, false, &name);
	r->fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close_quietly(dirfd);
	if (r->fd < 0)
		fail_errno("open a file");
	if (fstat(r->fd, &st) < 0)
		fail_errno("stat a file");
	if (!S_ISREG(st.st_mode))
		DynObjFail(DYN_OBJ_NO_SUCH_KEY, "The specified key does not exist.");
	r->size = st.st_size;
}

size_t
DynDirRead(DynObjReader *r, char *buf, size_t len)
{
	for (;;)
	{
		ssize_t		n = read(r->fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail_errno("read a file");
		r->pos += n;
		return (size_t) n;
	}
}

void
DynDirReaderClose(DynObjReader *r)
{
	reader_cleanup(r);
}

/* Delete a file (none: nothing happens; a missing directory on the way fails S3NoSuchKey). */
void
DynDirDelete(DynObjStore *s, const char *key)
{
	char	   *name;
	int			dirfd;

	dirfd = open_parent(s, key, false, &name);
	if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
	{
		close_quietly(dirfd);
		fail_errno("delete a file");
	}
	close_quietly(dirfd);
}

typedef struct DirEntry
{
	char	   *key;
	int64		size;
} DirEntry;

typedef struct DirWalk
{
	const char *prefix;
	DirEntry   *entries;
	int			n;
	int			cap;
} DirWalk;

/* Collect the regular files under directory fd (key path so far: base), never following links. */
static void
walk(int fd, const char *base, DirWalk *wk, int depth)
{
	DIR		   *d;
	struct dirent *de;

	if (depth > 64)
	{
		close_quietly(fd);
		return;
	}
	d = fdopendir(fd);
	if (d == NULL)
	{
		close_quietly(fd);
		fail_errno("list a directory");
	}
	while ((de = readdir(d)) != NULL)
	{
		struct stat st;
		char	   *key;

		if (!component_ok(de->d_name, strlen(de->d_name)))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		key = psprintf("%s%s", base, de->d_name);
		if (S_ISDIR(st.st_mode))
		{
			char	   *dirkey = psprintf("%s/", key);
			size_t		n = Min(strlen(dirkey), strlen(wk->prefix));
			int			sub;

			/* only directories that can hold keys with the prefix */
			if (strncmp(dirkey, wk->prefix, n) != 0)
				continue;
			sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				walk(sub, dirkey, wk, depth + 1);
		}
		else if (S_ISREG(st.st_mode) && strncmp(key, wk->prefix, strlen(wk->prefix)) == 0)
		{
			if (wk->n == wk->cap)
			{
				wk->cap = wk->cap ? wk->cap * 2 : 64;
				wk->entries = wk->entries ? repalloc_huge(wk->entries, sizeof(DirEntry) * wk->cap)
					: palloc(sizeof(DirEntry) * wk->cap);
			}
			wk->entries[wk->n].key = key;
			wk->entries[wk->n].size = st.st_size;
			wk->n++;
		}
	}
	closedir(d);
}

static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const DirEntry *) a)->key, ((const DirEntry *) b)->key);
}

void
DynDirList(DynObjStore *s, const char *prefix, DynObjListFn fn, void *arg)
{
	DirWalk		wk = {prefix, NULL, 0, 0};
	int			fd;

	DynDirCheckPath(s->directory);
	fd = open(s->directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		fail_errno("open the store's directory");
	walk(fd, "", &wk, 0);
	if (wk.n > 1)
		qsort(wk.entries, wk.n, sizeof(DirEntry), entry_cmp);
	for (int i = 0; i < wk.n; i++)
		fn(wk.entries[i].key, wk.entries[i].size, arg);
}
