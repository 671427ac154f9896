/*
 * objstore.h — object stores: where exports are written and imports read
 * (docs/import-export.md, "Object stores").
 *
 * A request names a bucket (S3Bucket, and S3BucketOwner); an administrator
 * maps bucket names to stores in dynindex.object_stores with
 * dynindex.set_object_store(...):
 *
 *   kind 's3'         an S3-compatible store (AWS S3, MinIO, Ceph, ...): endpoint
 *                     URL, region, access key id, secret access key, path-style
 *                     or virtual-host addressing; requests signed with SigV4
 *                     by libcurl (s3.c)
 *   kind 'directory'  a server directory inside the dynindex.exchange_directory
 *                     setting (dirstore.c); keys are relative paths in it,
 *                     opened component by component without following
 *                     symbolic links, so neither ".." nor a link escapes
 *
 * The secrets are read here with the extension owner's rights; no role but
 * the owner can read the table, and they never appear in a message, a log
 * line or a response.
 *
 * Every function needs a connected SPI (the stores' catalog is read through
 * it) the first time a bucket is opened in a transaction, and allocates in
 * CurrentMemoryContext; a store's HTTP handle is released with that context.
 *
 * Failures raise an ERROR with SQLSTATE DYN_OBJ_ERRCODE (58030, io_error)
 * whose message is "<FailureCode>: <FailureMessage>" in DynamoDB's terms
 * (the FailureCode / FailureMessage of ExportDescription and
 * ImportTableDescription), e.g.
 *   S3NoSuchBucket: The specified bucket does not exist
 *   S3AccessDenied: Access Denied
 * DynObjFailure() splits such an error into the two fields; any other error
 * is the job's own (FailureCode UnknownError in the caller's words).
 */
#ifndef DYNINDEX_OBJSTORE_H
#define DYNINDEX_OBJSTORE_H

#include "common/pg_compat.h"

/* SQLSTATE of store failures */
#define DYN_OBJ_ERRCODE ERRCODE_IO_ERROR

/* FailureCodes (DynamoDB's, where DynamoDB has one; docs/errors.md) */
#define DYN_OBJ_NO_SUCH_BUCKET "S3NoSuchBucket"	/* no such bucket (also: not configured) */
#define DYN_OBJ_ACCESS_DENIED "S3AccessDenied"	/* refused credentials, signature, or role */
#define DYN_OBJ_NO_SUCH_KEY "S3NoSuchKey"	/* reading an object that does not exist */
#define DYN_OBJ_UNAVAILABLE "S3ServiceUnavailable"	/* connection refused or lost, 5xx */
#define DYN_OBJ_INVALID "S3InvalidResponse"	/* a response the protocol does not allow */

typedef struct DynObjStore DynObjStore;
typedef struct DynObjWriter DynObjWriter;
typedef struct DynObjReader DynObjReader;

/* Called for each object of a listing, in key order (byte order); key is valid during the call only. */
typedef void (*DynObjListFn) (const char *key, int64 size, void *arg);

/* ---- objstore.c ---- */

/*
 * The store of a request's bucket (owner: its S3BucketOwner, or NULL).  A
 * bucket no store is configured for fails S3NoSuchBucket, as a bucket that
 * does not exist.  Checks nothing about the caller: see DynObjStoreCheckUse.
 */
extern DynObjStore *DynObjStoreOpen(const char *bucket, const char *owner);

/*
 * May the current user (inside an operation: its caller) use the bucket's
 * store (write: to export; else to import)?  Directory stores need membership in pg_write_server_files
 * (writing) or pg_read_server_files (reading), as COPY to and from server
 * files does; S3 stores need nothing more than the table right the operation
 * checked.  Returns false when refused; an unconfigured bucket is allowed
 * here (it fails in the job, as DynamoDB's export does).
 */
extern bool DynObjStoreCheckUse(const char *bucket, const char *owner, bool write);

/*
 * Ask the store to encrypt the objects written from now on (an export's
 * S3SseAlgorithm "AES256" or "KMS", and S3SseKmsKeyId): S3 stores send
 * x-amz-server-side-encryption (and its KMS key id) with every new object,
 * and the store encrypts them or refuses the request (a failure of the
 * job).  A directory store cannot encrypt what it writes: it fails
 * (S3SseNotSupported) rather than write the files in the clear.
 */
extern void DynObjStoreSetEncryption(DynObjStore *store, const char *algorithm, const char *kms_key_id);

/* "s3" or "directory" */
extern const char *DynObjStoreKind(DynObjStore *store);

/* Write an object in one piece (replacing any object of that key). */
extern void DynObjPut(DynObjStore *store, const char *key, const char *data, size_t len);

/*
 * Write an object in pieces: S3 stores upload parts of
 * dynindex.s3_part_size bytes (multipart upload above that size, a single
 * PUT below); directory stores write a hidden temporary file renamed into
 * place at Close.  Abort discards what was written (no object appears).
 */
extern DynObjWriter *DynObjWriterOpen(DynObjStore *store, const char *key);
extern void DynObjWrite(DynObjWriter *w, const char *data, size_t len);
extern void DynObjWriterClose(DynObjWriter *w);
extern void DynObjWriterAbort(DynObjWriter *w);
/* Bytes written so far. */
extern int64 DynObjWriterSize(DynObjWriter *w);
/* After Close: the ETag the store gave the object (quotes removed), or NULL (directory stores). */
extern const char *DynObjWriterETag(DynObjWriter *w);

/* Delete an object (none of that key: nothing happens). */
extern void DynObjDelete(DynObjStore *store, const char *key);

/* Read an object: size (if not NULL) gets its length; Read returns 0 at the end. */
extern DynObjReader *DynObjReaderOpen(DynObjStore *store, const char *key, int64 *size);
extern size_t DynObjRead(DynObjReader *r, char *buf, size_t len);
extern void DynObjReaderClose(DynObjReader *r);

/* Every object whose key starts with prefix, all pages, in key order. */
extern void DynObjList(DynObjStore *store, const char *prefix, DynObjListFn fn, void *arg);

/*
 * Raise a store failure (the stores' own code, and callers that find a
 * store's data unusable).
 */
pg_noreturn extern void DynObjFail(const char *code, const char *fmt,...) pg_attribute_printf(2, 3);

/*
 * Split an error into FailureCode and FailureMessage: true for a store
 * failure (code and message set, palloc'd), false for another error.
 */
extern bool DynObjFailure(int sqlerrcode, const char *message, char **code, char **failure_message);

/* ---- s3.c / dirstore.c (used by objstore.c only) ---- */

/* settings */
extern int	dynindex_s3_part_size_mb;
extern int	dynindex_s3_timeout_s;
extern char *dynindex_exchange_directory;
/* Define the settings above (from _PG_init). */
extern void DynObjStoreDefineSettings(void);

#endif
