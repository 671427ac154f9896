/*
 * types.h — the AttributeValue model: parsing and validating DynamoDB's typed
 * JSON, canonical numbers, item size arithmetic, comparison, and the
 * order-preserving key encoding.
 *
 * An item is a DynValue of type M.  Values are built in the current memory
 * context and never modified in place once shared; functions that change an
 * item return a new one (sharing unchanged sub-values).
 */
#ifndef DYNINDEX_TYPES_H
#define DYNINDEX_TYPES_H

#include "lib/stringinfo.h"
#include "utils/jsonb.h"

#include "common/pg_compat.h"

typedef enum DynType
{
	DYN_S = 0,
	DYN_N,
	DYN_B,
	DYN_BOOL,
	DYN_NULL,
	DYN_M,
	DYN_L,
	DYN_SS,
	DYN_NS,
	DYN_BS
} DynType;

#define DYN_NTYPES 10

typedef struct DynValue DynValue;

/* One member of a map (and of an item). */
typedef struct DynAttr
{
	const char *name;			/* not NUL-terminated necessarily; use namelen */
	int			namelen;
	DynValue   *value;
} DynAttr;

struct DynValue
{
	DynType		type;
	int			n;				/* M, L, SS, NS, BS: number of members */
	int			cap;			/* M: allocated members (DynMapAppend grows it) */
	union
	{
		struct
		{
			const char *data;	/* S: UTF-8; N: canonical text; B: raw bytes */
			int			len;
		}			str;
		bool		boolean;	/* BOOL */
		DynValue   *elems;		/* L, SS, NS, BS: n values (sets hold S/N/B values) */
		DynAttr    *attrs;		/* M: n members */
	}			u;
};

/* Limits (DynamoDB's). */
#define DYN_MAX_ITEM_SIZE		409600
#define DYN_MAX_HASH_KEY_SIZE	2048
#define DYN_MAX_RANGE_KEY_SIZE	1024
#define DYN_MAX_NESTING			32
#define DYN_MAX_NUMBER_DIGITS	38

/* ---- types.c: names ---- */
extern const char *DynTypeName(DynType t);	/* "S", "N", ... */
extern bool DynTypeFromName(const char *name, int len, DynType *t);
extern bool DynTypeIsScalarKey(DynType t);	/* S, N or B */
extern bool DynTypeIsSet(DynType t);

/* ---- number.c: canonical decimal numbers ---- */

/*
 * Canonicalize DynamoDB number text.  Returns NULL and sets *result to a
 * palloc'd canonical string, or returns DynamoDB's validation message.
 */
extern const char *DynNumberCanonicalize(const char *text, int len, char **result);
/* Compare two canonical numbers numerically: <0, 0, >0. */
extern int	DynNumberCompare(const char *a, int alen, const char *b, int blen);
/* a + b or a - b on canonical numbers; returns NULL or an error message. */
extern const char *DynNumberAdd(const char *a, int alen, const char *b, int blen,
								bool subtract, char **result);
/* DynamoDB's storage size of a canonical number. */
extern int	DynNumberSize(const char *canon, int len);
/* Append the order-preserving, self-delimiting key encoding of a canonical number. */
extern void DynNumberEncodeKey(StringInfo buf, const char *canon, int len);

/* ---- attrval.c: typed JSON <-> DynValue ---- */

/*
 * Parse one AttributeValue (a jsonb object such as {"S":"x"}).  On invalid
 * input returns NULL and sets *errmsg to DynamoDB's ValidationException
 * message (without the type prefix).  SerializationException-class problems
 * (a member of the wrong JSON type) are raised directly.
 */
extern DynValue *DynValueFromJsonb(JsonbValue *jv, const char **errmsg);
/* A JSON value read as DynamoDB reads a Boolean (*ok false if it is not one). */
extern bool DynJsonBoolean(JsonbValue *jv, bool *ok);
/* Raise DynamoDB's SerializationException for a JSON value that is not a <target>. */
pg_noreturn extern void DynSerializationErrorFor(JsonbValue *jv, const char *target);
/* Raise DynamoDB's SerializationException for a Blob that is no base64 string. */
extern void DynCheckBlobKind(JsonbValue *jv);
/* Parse a map of name -> AttributeValue (an Item, a Key, ExpressionAttributeValues). */
extern DynValue *DynItemFromJsonb(JsonbValue *jv, const char **errmsg);

/* Attribute names are at most 65535 bytes (DynamoDB's limit). */
#define DYN_MAX_ATTR_NAME_LEN 65535
extern void DynCheckAttributeNameLength(int len);
/* Parse a stored item (already validated; no checks). */
extern DynValue *DynItemFromStored(Jsonb *jb);

/* Push a string of len bytes / raw bytes as base64 text into a jsonb being built. */
extern void DynPushJsonbString(JsonbParseState **state, JsonbIteratorToken tok, const char *s, int len);

/* ---- nulstr.c: U+0000 in jsonb strings, escaped as U+E000 '0' (U+E000 itself as U+E000 'E') ---- */
/* Decode / encode one string; return s itself when nothing changes. */
extern const char *DynNulDecode(const char *s, int len, int *outlen);
extern const char *DynNulEncode(const char *s, int len, int *outlen);
/* dynindex.api's jsonb request and response: escape / unescape U+E000. */
extern Jsonb *DynNulEscapeRequest(Jsonb *jb);
extern Jsonb *DynNulUnescapeResponse(Jsonb *jb);
/* dynindex.api_text's JSON text: "\u0000" in, "\u0000" out. */
extern char *DynNulJsonTextIn(const char *s, int len);
extern char *DynNulJsonTextOut(const char *s);
extern void DynPushJsonbBase64(JsonbParseState **state, JsonbIteratorToken tok, const char *data, int len);
/* Append a value (typed JSON) to a jsonb being built. */
extern void DynValuePushJsonb(JsonbParseState **state, const DynValue *v);
/* Build a jsonb of an item / value. */
extern Jsonb *DynItemToJsonb(const DynValue *item);
extern JsonbValue *DynItemToJsonbValue(const DynValue *item);
/* Render a value as DynamoDB prints it in messages, e.g. {S:b} or [a, b]. */
extern void DynValueAppendForMessage(StringInfo buf, const DynValue *v);

/* ---- attrval.c: items ---- */
extern DynValue *DynMapGet(const DynValue *map, const char *name, int namelen);
extern DynValue *DynMapGetStr(const DynValue *map, const char *name);
/* Return a copy of map with name set to value (value NULL removes it). */
extern DynValue *DynMapSet(const DynValue *map, const char *name, int namelen, DynValue *value);
extern DynValue *DynMakeMap(int capacity);	/* empty map with room for capacity members */
extern void DynMapAppend(DynValue *map, const char *name, int namelen, DynValue *value);	/* no dup check */
extern DynValue *DynMakeString(DynType t, const char *data, int len);	/* S, N, B */

/* Sizes by DynamoDB's arithmetic. */
extern int64 DynValueSize(const DynValue *v);
extern int64 DynItemSize(const DynValue *item);
/* Deepest nesting of a value (a scalar is 1). */
extern int	DynValueDepth(const DynValue *v);

/* Deep equality (sets compare as sets, maps by member). */
extern bool DynValueEquals(const DynValue *a, const DynValue *b);
/* Order of two scalars of the same type (S, N, B): <0, 0, >0. */
extern int	DynScalarCompare(const DynValue *a, const DynValue *b);

/* ---- keyenc.c: order-preserving key encoding ---- */

/*
 * Append the encoding of a scalar key value.  Byte order of encodings equals
 * DynamoDB's order: N numerically, S by UTF-8 bytes, B by unsigned bytes.
 * With terminated=false (a single-attribute key) S and B are their raw bytes;
 * with terminated=true the encoding is self-delimiting so that a tuple of
 * encodings orders component by component (multi-attribute keys).
 */
extern void DynKeyEncode(StringInfo buf, const DynValue *v, bool terminated);
/* Self-delimiting bytes: each 0x00 escaped as 0x00 0xFF, then this terminator (keyenc.c). */
#define DYN_KEY_TERMINATOR "\x00\x01"
extern Size DynKeyEscapedLen(const char *data, Size len);
extern char *DynKeyEscape(char *out, const char *data, Size len);
/* Append the encoding of a prefix for begins_with (S or B, no terminator). */
extern void DynKeyEncodePrefix(StringInfo buf, const DynValue *v, bool terminated);

#endif
