/*
 * objstore_int.h — the object stores' insides, shared by objstore.c (the
 * catalog and the dispatch), s3.c, s3sign.c and dirstore.c; nothing else
 * includes it.
 */
#ifndef DYNINDEX_OBJSTORE_INT_H
#define DYNINDEX_OBJSTORE_INT_H

#include "lib/stringinfo.h"

#include "exchange/objstore.h"

typedef enum DynObjKind
{
	DYN_OBJ_S3,
	DYN_OBJ_DIRECTORY
} DynObjKind;

struct DynObjStore
{
	DynObjKind	kind;
	char	   *bucket;			/* the name the request gave */
	/* s3 */
	char	   *endpoint;		/* http(s)://host[:port] (no trailing slash) */
	char	   *region;
	char	   *access_key_id;
	char	   *secret_access_key;	/* never printed */
	char	   *remote_bucket;	/* the bucket's name at the store */
	bool		path_style;
	const char *sse[3];			/* server-side encryption headers of new objects (NULL-ended) */
	void	   *curl;			/* CURL *, released with the memory context */
	/* directory */
	char	   *directory;
};

struct DynObjWriter
{
	DynObjStore *store;
	char	   *key;
	int64		size;			/* bytes written */
	bool		done;
	char	   *etag;			/* after close (s3) */
	/* s3 */
	StringInfoData buf;			/* the part being filled */
	char	   *upload_id;		/* multipart upload, once started */
	int			nparts;
	char	  **etags;
	int			etags_cap;
	/* directory */
	int			fd;
	int			dirfd;
	char	   *tmpname;
	char	   *name;
};

struct DynObjReader
{
	DynObjStore *store;
	char	   *key;
	int64		size;
	int64		pos;			/* next byte to return */
	/* s3: one ranged GET at a time */
	StringInfoData buf;
	int			bufpos;
	/* directory */
	int			fd;
};

/* ---- s3.c ---- */
extern void DynS3Put(DynObjStore *s, const char *key, const char *data, size_t len);
extern void DynS3WriterInit(DynObjWriter *w);
extern void DynS3Write(DynObjWriter *w, const char *data, size_t len);
extern void DynS3WriterClose(DynObjWriter *w);
extern void DynS3WriterAbort(DynObjWriter *w);
extern void DynS3ReaderInit(DynObjReader *r);
extern size_t DynS3Read(DynObjReader *r, char *buf, size_t len);
extern void DynS3Delete(DynObjStore *s, const char *key);
extern void DynS3List(DynObjStore *s, const char *prefix, DynObjListFn fn, void *arg);
/* S3's XML: the text of the first <tag> after *pos (entities decoded), or NULL; moves *pos past it */
extern char *DynS3XmlNext(const char *xml, size_t len, size_t *pos, const char *tag);

/* ---- s3sign.c ---- */
extern void DynS3Sha256Hex(const char *data, size_t len, char out[65]);
extern char *DynS3Authorization(const char *method, const char *path, const char *query,
								const char *const *headers, int nheaders, const char *payload_hash,
								const char *amz_date, const char *key_id, const char *secret,
								const char *region);

/* ---- dirstore.c ---- */
extern void DynDirCheckPath(const char *directory);
extern void DynDirPut(DynObjStore *s, const char *key, const char *data, size_t len);
extern void DynDirWriterInit(DynObjWriter *w);
extern void DynDirWrite(DynObjWriter *w, const char *data, size_t len);
extern void DynDirWriterClose(DynObjWriter *w);
extern void DynDirWriterAbort(DynObjWriter *w);
extern void DynDirReaderInit(DynObjReader *r);
extern size_t DynDirRead(DynObjReader *r, char *buf, size_t len);
extern void DynDirReaderClose(DynObjReader *r);
extern void DynDirDelete(DynObjStore *s, const char *key);
extern void DynDirList(DynObjStore *s, const char *prefix, DynObjListFn fn, void *arg);

#endif
