/*
 * import_json.c — a DynamoDB JSON line read straight into the typed item
 * (DynValue), one pass over the text, for the lines that need nothing else.
 *
 * The general path (import_read.c, import.c) parses a line with jsonb_in,
 * checks the jsonb as PutItem checks an item (DynItemFromJsonb) and encodes
 * the item again: three passes, and PostgreSQL 15's JSON lexer copies strings
 * a byte at a time.  This reader takes only the lines whose reading cannot go
 * wrong: {"Item": {...}} with attribute values of the types S, N, BOOL,
 * NULL (true), M, L, SS and NS, each with exactly one member; strings without
 * backslash escapes, of valid UTF-8 other than the private-use block U+E000..
 * U+EFFF (types/nulstr.c's escapes); numbers DynNumberCanonicalize accepts;
 * no duplicate name in a map, no duplicate member in a set, no empty set, no
 * nesting deeper than DynamoDB's 32 levels.  Anything else (B and BS, an
 * escape, a JSON number or null, an unknown member, a second top-level key,
 * any error at all) is refused, and the line goes through the general path,
 * which gives its error and message: what this reader accepts, the general
 * path accepts too, with the same item (map members in jsonb's order:
 * shorter names first, then bytewise), so the results, messages and error
 * counts are the general path's.  dynindex.import_fast_json = off turns it
 * off (the fuzz suite compares the two on the same files).
 */
#include "postgres.h"

#include "common/base64.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "exchange/import.h"
#include "types/types.h"

bool		dynindex_import_fast_json = true;

/* The text being read. */
typedef struct FastJson
{
	const char *p;
	const char *end;
} FastJson;

/* Skip JSON's whitespace (space, tab, newline, carriage return). */
static inline void
skip_ws(FastJson *f)
{
	while (f->p < f->end && (*f->p == ' ' || *f->p == '\t' || *f->p == '\n' || *f->p == '\r'))
		f->p++;
}

/* Take the character c (after whitespace); false if it is not next. */
static inline bool
eat(FastJson *f, char c)
{
	skip_ws(f);
	if (f->p < f->end && *f->p == c)
	{
		f->p++;
		return true;
	}
	return false;
}

/*
 * A string without escapes, of valid UTF-8 outside U+E000..U+EFFF (lead byte
 * 0xEE); its bytes are left in place.  False for anything else.
 */
static bool
read_string(FastJson *f, const char **s, int *len)
{
	const char *start;

	if (!eat(f, '"'))
		return false;
	start = f->p;
	while (f->p < f->end)
	{
		unsigned char c = (unsigned char) *f->p;

		if (c == '"')
		{
			*s = start;
			*len = (int) (f->p - start);
			f->p++;
			return true;
		}
		if (c < 0x20 || c == '\\' || c == 0xEE)
			return false;
		if (c < 0x80)
			f->p++;
		else
		{
			int			n = pg_utf_mblen((const unsigned char *) f->p);

			if (n < 2 || f->end - f->p < n || !pg_utf8_islegal((const unsigned char *) f->p, n))
				return false;
			f->p += n;
		}
	}
	return false;
}

/* The literal true or false. */
static bool
read_bool(FastJson *f, bool *b)
{
	skip_ws(f);
	if (f->end - f->p >= 4 && memcmp(f->p, "true", 4) == 0)
	{
		*b = true;
		f->p += 4;
		return true;
	}
	if (f->end - f->p >= 5 && memcmp(f->p, "false", 5) == 0)
	{
		*b = false;
		f->p += 5;
		return true;
	}
	return false;
}

/* An array of *cap elements of size bytes, full, twice as large (its elements copied). */
static void *
grow(const void *arr, int *cap, size_t size)
{
	void	   *more = palloc(size * *cap * 2);

	memcpy(more, arr, size * *cap);
	*cap *= 2;
	return more;
}

/* jsonb's order of object keys: shorter first, then bytewise. */
static int
attr_cmp(const void *a, const void *b)
{
	const DynAttr *x = a;
	const DynAttr *y = b;

	if (x->namelen != y->namelen)
		return x->namelen > y->namelen ? 1 : -1;
	return memcmp(x->name, y->name, x->namelen);
}

/* Set members in DynamoDB's order (to find duplicates). */
static int
elem_cmp(const void *a, const void *b)
{
	return DynScalarCompare((const DynValue *) a, (const DynValue *) b);
}

static DynValue *read_value(FastJson *f, int depth);

/* A string, or with number a number's string in canonical form (false: not one). */
static bool
read_scalar(FastJson *f, bool number, const char **s, int *len)
{
	char	   *canon;

	if (!read_string(f, s, len))
		return false;
	if (!number)
		return true;
	if (DynNumberCanonicalize(*s, *len, &canon) != NULL)
		return false;
	*s = canon;
	*len = strlen(canon);
	return true;
}

/* A map {name: AttributeValue, ...} whose members are at depth + 1; NULL: not for this reader. */
static DynValue *
read_map(FastJson *f, int depth)
{
	DynAttr		local[16];
	DynAttr    *attrs = local;
	int			cap = lengthof(local);
	int			n = 0;
	DynValue   *map;

	if (!eat(f, '{'))
		return NULL;
	if (!eat(f, '}'))
	{
		do
		{
			const char *name;
			int			namelen;
			DynValue   *v;

			if (!read_string(f, &name, &namelen) || namelen == 0 || namelen > DYN_MAX_ATTR_NAME_LEN ||
				!eat(f, ':'))
				return NULL;
			v = read_value(f, depth + 1);
			if (v == NULL)
				return NULL;
			if (n == cap)
				attrs = grow(attrs, &cap, sizeof(DynAttr));
			attrs[n].name = name;
			attrs[n].namelen = namelen;
			attrs[n].value = v;
			n++;
		} while (eat(f, ','));
		if (!eat(f, '}'))
			return NULL;
	}
	if (n > 1)
	{
		qsort(attrs, n, sizeof(DynAttr), attr_cmp);
		for (int i = 1; i < n; i++)
			if (attr_cmp(&attrs[i - 1], &attrs[i]) == 0)
				return NULL;	/* a duplicate name: jsonb keeps the last one */
	}
	map = DynMakeMap(n);
	memcpy(map->u.attrs, attrs, sizeof(DynAttr) * n);
	map->n = n;
	return map;
}

/* A list [AttributeValue, ...] whose elements are at depth + 1. */
static DynValue *
read_list(FastJson *f, int depth)
{
	DynValue	local[16];
	DynValue   *elems = local;
	int			cap = lengthof(local);
	int			n = 0;
	DynValue   *list;

	if (!eat(f, '['))
		return NULL;
	if (!eat(f, ']'))
	{
		do
		{
			DynValue   *v = read_value(f, depth + 1);

			if (v == NULL)
				return NULL;
			if (n == cap)
				elems = grow(elems, &cap, sizeof(DynValue));
			elems[n++] = *v;
		} while (eat(f, ','));
		if (!eat(f, ']'))
			return NULL;
	}
	list = palloc(sizeof(DynValue));
	list->type = DYN_L;
	list->n = n;
	list->u.elems = palloc(sizeof(DynValue) * Max(n, 1));
	memcpy(list->u.elems, elems, sizeof(DynValue) * n);
	return list;
}

/* A string set or number set (members S or N): not empty, no duplicates. */
static DynValue *
read_set(FastJson *f, DynType t)
{
	DynValue	local[16];
	DynValue   *elems = local;
	int			cap = lengthof(local);
	int			n = 0;
	DynValue   *set;

	if (!eat(f, '[') || eat(f, ']'))
		return NULL;
	do
	{
		const char *s;
		int			len;

		if (!read_scalar(f, t == DYN_NS, &s, &len))
			return NULL;
		if (n == cap)
			elems = grow(elems, &cap, sizeof(DynValue));
		elems[n].type = t == DYN_SS ? DYN_S : DYN_N;
		elems[n].n = 0;
		elems[n].u.str.data = s;
		elems[n].u.str.len = len;
		n++;
	} while (eat(f, ','));
	if (!eat(f, ']'))
		return NULL;
	set = palloc(sizeof(DynValue));
	set->type = t;
	set->n = n;
	set->u.elems = palloc(sizeof(DynValue) * n);
	memcpy(set->u.elems, elems, sizeof(DynValue) * n);
	if (n > 1)
	{
		/* sorted in the local array (the set keeps its input order) */
		if (elems == local)
		{
			elems = palloc(sizeof(DynValue) * n);
			memcpy(elems, local, sizeof(DynValue) * n);
		}
		qsort(elems, n, sizeof(DynValue), elem_cmp);
		for (int i = 1; i < n; i++)
			if (DynScalarCompare(&elems[i - 1], &elems[i]) == 0)
				return NULL;
	}
	return set;
}

/* One AttributeValue {"T": value} at depth (a top-level attribute is 1). */
static DynValue *
read_value(FastJson *f, int depth)
{
	const char *type;
	int			typelen;
	DynType		t;
	DynValue   *v = NULL;

	if (depth > DYN_MAX_NESTING || !eat(f, '{') || !read_string(f, &type, &typelen) ||
		!eat(f, ':') || !DynTypeFromName(type, typelen, &t))
		return NULL;
	switch (t)
	{
		case DYN_S:
		case DYN_N:
			{
				const char *s;
				int			len;

				if (!read_scalar(f, t == DYN_N, &s, &len))
					return NULL;
				v = DynMakeString(t, s, len);
				break;
			}
		case DYN_BOOL:
		case DYN_NULL:
			{
				bool		b;

				if (!read_bool(f, &b) || (t == DYN_NULL && !b))
					return NULL;
				v = palloc(sizeof(DynValue));
				v->type = t;
				v->n = 0;
				v->u.boolean = b;
				break;
			}
		case DYN_M:
			v = read_map(f, depth);
			break;
		case DYN_L:
			v = read_list(f, depth);
			break;
		case DYN_SS:
		case DYN_NS:
			v = read_set(f, t);
			break;
		case DYN_B:
		case DYN_BS:
			return NULL;		/* base64 and its messages: the general path */
	}
	if (v == NULL || !eat(f, '}'))
		return NULL;
	return v;
}

/*
 * Read a line {"Item": {...}} into its item (in the current memory context,
 * which keeps a copy of the line the item points into); false when the line
 * is not one this reader takes: the general path then reads it.
 */
bool
DynImportJsonItem(const char *line, int len, DynValue **item)
{
	char	   *copy = palloc(len + 1);
	FastJson	f;
	const char *key;
	int			keylen;
	DynValue   *v;

	memcpy(copy, line, len);
	copy[len] = '\0';
	f.p = copy;
	f.end = copy + len;
	if (!eat(&f, '{') || !read_string(&f, &key, &keylen) || keylen != 4 || memcmp(key, "Item", 4) != 0 ||
		!eat(&f, ':'))
		return false;
	v = read_map(&f, 0);
	if (v == NULL || !eat(&f, '}'))
		return false;
	skip_ws(&f);
	if (f.p != f.end)
		return false;
	*item = v;
	return true;
}

/* ---------------------------------------------------------------- the stored form */

static void value_to_jsonb(const DynValue *v, JsonbValue *out);

/* A jsonb string of a DynamoDB string (U+0000 and ESC escaped, types/nulstr.c). */
static inline void
string_value(const char *s, int len, JsonbValue *out)
{
	int			n;

	out->type = jbvString;
	out->val.string.val = (char *) DynNulEncode(s, len, &n);
	out->val.string.len = n;
}

/* A jsonb string of bytes in base64 (B, BS members). */
static void
base64_value(const char *data, int len, JsonbValue *out)
{
	char	   *buf = palloc(pg_b64_enc_len(len) + 1);
	int			n = pg_b64_encode((const uint8 *) data, len, buf, pg_b64_enc_len(len));

	string_value(buf, n, out);
}

/* jsonb's order of object pairs: keys shorter first, then bytewise. */
static int
pair_cmp(const void *a, const void *b)
{
	const JsonbValue *x = &((const JsonbPair *) a)->key;
	const JsonbValue *y = &((const JsonbPair *) b)->key;

	if (x->val.string.len != y->val.string.len)
		return x->val.string.len > y->val.string.len ? 1 : -1;
	return memcmp(x->val.string.val, y->val.string.val, x->val.string.len);
}

/* The jsonb object of a map (its names are unique): pairs in jsonb's order. */
static void
map_to_jsonb(const DynValue *map, JsonbValue *out)
{
	JsonbPair  *pairs = palloc(sizeof(JsonbPair) * Max(map->n, 1));
	bool		sorted = true;

	for (int i = 0; i < map->n; i++)
	{
		string_value(map->u.attrs[i].name, map->u.attrs[i].namelen, &pairs[i].key);
		value_to_jsonb(map->u.attrs[i].value, &pairs[i].value);
		pairs[i].order = i;
		if (i > 0 && sorted && pair_cmp(&pairs[i - 1], &pairs[i]) > 0)
			sorted = false;
	}
	if (!sorted)
		qsort(pairs, map->n, sizeof(JsonbPair), pair_cmp);
	out->type = jbvObject;
	out->val.object.nPairs = map->n;
	out->val.object.pairs = pairs;
}

/* The jsonb of one AttributeValue: {"T": value}. */
static void
value_to_jsonb(const DynValue *v, JsonbValue *out)
{
	JsonbPair  *pair = palloc(sizeof(JsonbPair));
	JsonbValue *jv = &pair->value;
	const char *name = DynTypeName(v->type);

	check_stack_depth();
	pair->key.type = jbvString;
	pair->key.val.string.val = (char *) name;
	pair->key.val.string.len = strlen(name);
	pair->order = 0;
	switch (v->type)
	{
		case DYN_S:
		case DYN_N:
			string_value(v->u.str.data, v->u.str.len, jv);
			break;
		case DYN_B:
			base64_value(v->u.str.data, v->u.str.len, jv);
			break;
		case DYN_BOOL:
		case DYN_NULL:
			jv->type = jbvBool;
			jv->val.boolean = v->u.boolean;
			break;
		case DYN_SS:
		case DYN_NS:
		case DYN_BS:
		case DYN_L:
			jv->type = jbvArray;
			jv->val.array.rawScalar = false;
			jv->val.array.nElems = v->n;
			jv->val.array.elems = palloc(sizeof(JsonbValue) * Max(v->n, 1));
			for (int i = 0; i < v->n; i++)
			{
				const DynValue *e = &v->u.elems[i];

				if (v->type == DYN_L)
					value_to_jsonb(e, &jv->val.array.elems[i]);
				else if (v->type == DYN_BS)
					base64_value(e->u.str.data, e->u.str.len, &jv->val.array.elems[i]);
				else
					string_value(e->u.str.data, e->u.str.len, &jv->val.array.elems[i]);
			}
			break;
		case DYN_M:
			map_to_jsonb(v, jv);
			break;
	}
	out->type = jbvObject;
	out->val.object.nPairs = 1;
	out->val.object.pairs = pair;
}

/*
 * The stored jsonb of an item, the same bytes as DynItemToJsonb's: the value
 * tree is built directly, each object's pairs already in jsonb's order,
 * instead of being pushed through pushJsonbValue (which copies every value
 * and sorts every object again).
 */
Jsonb *
DynImportItemToJsonb(const DynValue *item)
{
	JsonbValue	jv;

	if (!dynindex_import_fast_json)
		return DynItemToJsonb(item);
	Assert(item->type == DYN_M);
	map_to_jsonb(item, &jv);
	return JsonbValueToJsonb(&jv);
}

/* Define the reader's setting (from DynObjStoreDefineSettings). */
void
DynImportDefineSettings(void)
{
	DefineCustomBoolVariable("dynindex.import_fast_json",
							 "Read DynamoDB JSON import lines straight into their items when they need nothing else.",
							 "Off: every line goes through jsonb_in and the item checks (the same results, slower); the fuzz suite compares the two.",
							 &dynindex_import_fast_json, true,
							 PGC_SUSET, 0, NULL, NULL, NULL);
}
