/*
 * import_ionbin.c — reading binary Ion (the subset DynamoDB uses; see
 * import_ion.c for the text form and docs/import-export.md): the version
 * marker E0 01 00 EA, local symbol tables ($ion_symbol_table structs with a
 * "symbols" list; imports other than $ion are refused), and values: null and
 * typed nulls (NULL), bool, positive and negative integers and decimals of
 * any length (N), floats (N, not nan or infinity), strings (S), blobs (B),
 * lists (L), structs (M), and lists annotated $dynamodb_SS / _NS / _BS (the
 * sets).  Timestamps, symbols as values, clobs and s-expressions are refused.
 * Each top-level value must be a struct {Item: {...}}; the result is the
 * item's typed JSON, checked afterwards as any item.
 */
#include "postgres.h"

#include <math.h>

#include "common/base64.h"
#include "common/pg_compat.h"
#include "exchange/import.h"
#include "mb/pg_wchar.h"
#include "types/types.h"
#include "utils/jsonb.h"

#define ION_MAX_DEPTH 40

/* Ion's system symbols (1-9). */
static const char *const system_symbols[] = {
	NULL, "$ion", "$ion_1_0", "$ion_symbol_table", "name", "version", "imports", "symbols",
	"max_id", "$ion_shared_symbol_table"
};
#define SYSTEM_SYMBOLS 9

typedef enum BinMode
{
	BIN_TYPED,
	BIN_SET_S,
	BIN_SET_N,
	BIN_SET_B
} BinMode;

/* A reader over one value's bytes (the top-level value is read whole first). */
typedef struct BinReader
{
	const unsigned char *p;
	const unsigned char *end;
	const char *error;
	JsonbParseState *st;
	DynIonBinSymbols *symbols;
} BinReader;

static bool
bin_fail(BinReader *r, const char *msg)
{
	if (r->error == NULL)
		r->error = msg;
	return false;
}

/* VarUInt: 7 bits per byte, the last byte's high bit set. */
static bool
read_varuint(const unsigned char **p, const unsigned char *end, uint64 *out)
{
	uint64		v = 0;

	for (int i = 0; i < 9; i++)
	{
		if (*p >= end)
			return false;
		v = (v << 7) | (**p & 0x7F);
		if (*(*p)++ & 0x80)
		{
			*out = v;
			return true;
		}
	}
	return false;
}

/* VarInt: sign in the first byte's second bit. */
static bool
read_varint(const unsigned char **p, const unsigned char *end, int64 *out)
{
	bool		neg;
	int64		v;

	if (*p >= end)
		return false;
	neg = (**p & 0x40) != 0;
	v = **p & 0x3F;
	if (*(*p)++ & 0x80)
	{
		*out = neg ? -v : v;
		return true;
	}
	for (int i = 0; i < 9; i++)
	{
		if (*p >= end)
			return false;
		v = (v << 7) | (**p & 0x7F);
		if (*(*p)++ & 0x80)
		{
			*out = neg ? -v : v;
			return true;
		}
	}
	return false;
}

/* A type descriptor's length: L, or a VarUInt after it (L = 14). */
static bool
value_length(BinReader *r, int l, uint64 *len)
{
	if (l == 14)
	{
		if (!read_varuint(&r->p, r->end, len))
			return bin_fail(r, "The binary Ion value is truncated");
	}
	else
		*len = l;
	if (*len > (uint64) (r->end - r->p))
		return bin_fail(r, "The binary Ion value is truncated");
	return true;
}

/* Decimal text of an unsigned big-endian magnitude of n bytes. */
static void
magnitude_text(const unsigned char *m, int n, StringInfo out)
{
	unsigned char *work = palloc(Max(n, 1));
	char	   *digits = palloc(n * 3 + 2);
	int			nd = 0;
	bool		zero;

	memcpy(work, m, n);
	do
	{
		int			rem = 0;

		zero = true;
		for (int i = 0; i < n; i++)
		{
			int			cur = rem * 256 + work[i];

			work[i] = cur / 10;
			rem = cur % 10;
			if (work[i])
				zero = false;
		}
		digits[nd++] = '0' + rem;
	} while (!zero);
	while (nd > 0)
		appendStringInfoChar(out, digits[--nd]);
}

static void
push_string(BinReader *r, JsonbIteratorToken tok, const char *s, int len)
{
	JsonbValue	v;
	int			outlen;
	const char *enc = DynNulEncode(s, len, &outlen);

	v.type = jbvString;
	v.val.string.val = pnstrdup(enc, outlen);
	v.val.string.len = outlen;
	pushJsonbValue(&r->st, tok, &v);
}

static void
begin_typed(BinReader *r, const char *type)
{
	pushJsonbValue(&r->st, WJB_BEGIN_OBJECT, NULL);
	push_string(r, WJB_KEY, type, strlen(type));
}

/* Emit a scalar in a mode: typed {"T": v}, or a set element of the right type. */
static bool
emit_scalar(BinReader *r, BinMode mode, const char *type, const char *s, int len)
{
	BinMode		want = type[0] == 'S' ? BIN_SET_S : type[0] == 'N' ? BIN_SET_N : BIN_SET_B;

	if (mode == BIN_TYPED)
	{
		begin_typed(r, type);
		push_string(r, WJB_VALUE, s, len);
		pushJsonbValue(&r->st, WJB_END_OBJECT, NULL);
		return true;
	}
	if (mode != want)
		return bin_fail(r, "The binary Ion text has a set element of another type than its set");
	push_string(r, WJB_ELEM, s, len);
	return true;
}

/* The text of a symbol id; NULL when unknown. */
static const char *
symbol_text(BinReader *r, uint64 sid)
{
	if (sid >= 1 && sid <= SYSTEM_SYMBOLS)
		return system_symbols[sid];
	if (r->symbols && sid > SYSTEM_SYMBOLS && sid - SYSTEM_SYMBOLS <= (uint64) r->symbols->n)
		return r->symbols->names[sid - SYSTEM_SYMBOLS - 1];
	return NULL;
}

static bool read_value(BinReader *r, BinMode mode, int depth);

/* The members of a container of len bytes: struct fields (field SIDs) or list elements. */
static bool
read_members(BinReader *r, uint64 len, bool is_struct, BinMode mode, int depth)
{
	const unsigned char *end = r->p + len;
	const unsigned char *outer = r->end;

	r->end = end;
	while (r->p < end)
	{
		if (is_struct)
		{
			uint64		sid;
			const char *name;

			if (!read_varuint(&r->p, end, &sid))
				return bin_fail(r, "The binary Ion value is truncated");
			/* a NOP pad as a field value is skipped with its name */
			if (r->p < end && (*r->p >> 4) == 0 && (*r->p & 0x0F) != 15)
			{
				uint64		pad;

				r->p++;
				if (!value_length(r, r->p[-1] & 0x0F, &pad))
					return false;
				r->p += pad;
				continue;
			}
			name = symbol_text(r, sid);
			if (name == NULL)
				return bin_fail(r, "The binary Ion value has a field name of an unknown symbol");
			push_string(r, WJB_KEY, name, strlen(name));
		}
		if (!read_value(r, mode, depth + 1))
			return false;
	}
	r->end = outer;
	return true;
}

/* One value (with its annotations) in a mode. */
static bool
read_value(BinReader *r, BinMode mode, int depth)
{
	int			t;
	int			l;
	uint64		len;
	BinMode		set_mode = BIN_TYPED;
	StringInfoData s;

	if (depth > ION_MAX_DEPTH)
		return bin_fail(r, "The Ion value nests too deeply");
	if (r->p >= r->end)
		return bin_fail(r, "The binary Ion value is truncated");
	t = *r->p >> 4;
	l = *r->p & 0x0F;
	r->p++;
	if (t == 14)				/* annotation wrapper: annotations, then the value */
	{
		uint64		alen;
		const unsigned char *aend;

		if (l == 0 || l == 15 || !value_length(r, l, &len))
			return bin_fail(r, "The binary Ion value has an invalid annotation");
		if (!read_varuint(&r->p, r->end, &alen) || alen > (uint64) (r->end - r->p))
			return bin_fail(r, "The binary Ion value is truncated");
		aend = r->p + alen;
		while (r->p < aend)
		{
			uint64		sid;
			const char *a;

			if (!read_varuint(&r->p, aend, &sid))
				return bin_fail(r, "The binary Ion value is truncated");
			a = symbol_text(r, sid);
			if (a && strcmp(a, "$dynamodb_SS") == 0)
				set_mode = BIN_SET_S;
			else if (a && strcmp(a, "$dynamodb_NS") == 0)
				set_mode = BIN_SET_N;
			else if (a && strcmp(a, "$dynamodb_BS") == 0)
				set_mode = BIN_SET_B;
		}
		if (r->p >= r->end)
			return bin_fail(r, "The binary Ion value is truncated");
		t = *r->p >> 4;
		l = *r->p & 0x0F;
		r->p++;
		if (set_mode != BIN_TYPED)
		{
			const char *type = set_mode == BIN_SET_S ? "SS" : set_mode == BIN_SET_N ? "NS" : "BS";

			if (t != 11 || mode != BIN_TYPED || !value_length(r, l, &len))
				return bin_fail(r, "The binary Ion value has a set annotation on a value that is not a list");
			begin_typed(r, type);
			pushJsonbValue(&r->st, WJB_BEGIN_ARRAY, NULL);
			if (!read_members(r, len, false, set_mode, depth))
				return false;
			pushJsonbValue(&r->st, WJB_END_ARRAY, NULL);
			pushJsonbValue(&r->st, WJB_END_OBJECT, NULL);
			return true;
		}
	}
	if (l == 15 && t != 1)		/* a typed null (or null) */
	{
		JsonbValue	b;

		if (mode != BIN_TYPED)
			return bin_fail(r, "The binary Ion value has a null set element");
		begin_typed(r, "NULL");
		b.type = jbvBool;
		b.val.boolean = true;
		pushJsonbValue(&r->st, WJB_VALUE, &b);
		pushJsonbValue(&r->st, WJB_END_OBJECT, NULL);
		return true;
	}
	initStringInfo(&s);
	switch (t)
	{
		case 0:					/* NOP pad (in a list) */
			if (!value_length(r, l, &len))
				return false;
			r->p += len;
			return true;
		case 1:					/* bool */
			{
				JsonbValue	b;

				if (mode != BIN_TYPED)
					return bin_fail(r, "The binary Ion value has a boolean set element");
				if (l == 15)
				{
					begin_typed(r, "NULL");
					b.val.boolean = true;
				}
				else
				{
					begin_typed(r, "BOOL");
					b.val.boolean = l == 1;
				}
				b.type = jbvBool;
				pushJsonbValue(&r->st, WJB_VALUE, &b);
				pushJsonbValue(&r->st, WJB_END_OBJECT, NULL);
				return true;
			}
		case 2:					/* positive integer */
		case 3:					/* negative integer */
			if (!value_length(r, l, &len))
				return false;
			if (t == 3)
				appendStringInfoChar(&s, '-');
			magnitude_text(r->p, (int) len, &s);
			r->p += len;
			if (t == 3 && strcmp(s.data, "-0") == 0)
				return bin_fail(r, "The binary Ion value has a negative zero integer");
			return emit_scalar(r, mode, "N", s.data, s.len);
		case 4:					/* float */
			{
				double		d;

				if (l != 0 && l != 4 && l != 8)
					return bin_fail(r, "The binary Ion value has an invalid float");
				if (!value_length(r, l, &len))
					return false;
				if (len == 0)
					d = 0;
				else if (len == 4)
				{
					uint32		u = ((uint32) r->p[0] << 24) | (r->p[1] << 16) | (r->p[2] << 8) | r->p[3];
					float		f;

					memcpy(&f, &u, 4);
					d = f;
				}
				else
				{
					uint64		u = 0;

					for (int i = 0; i < 8; i++)
						u = (u << 8) | r->p[i];
					memcpy(&d, &u, 8);
				}
				r->p += len;
				if (isnan(d) || isinf(d))
					return bin_fail(r, "The Ion text has a float DynamoDB cannot store (nan or infinity)");
				appendStringInfo(&s, "%.17g", d);
				return emit_scalar(r, mode, "N", s.data, s.len);
			}
		case 5:					/* decimal: VarInt exponent, Int coefficient (sign in the first bit) */
			{
				const unsigned char *end;
				int64		exponent = 0;
				unsigned char *mag;
				int			n;

				if (!value_length(r, l, &len))
					return false;
				end = r->p + len;
				if (len > 0 && !read_varint(&r->p, end, &exponent))
					return bin_fail(r, "The binary Ion value has an invalid decimal");
				n = end - r->p;
				if (n > 0)
				{
					mag = palloc(n);
					memcpy(mag, r->p, n);
					if (mag[0] & 0x80)
						appendStringInfoChar(&s, '-');
					mag[0] &= 0x7F;
					magnitude_text(mag, n, &s);
				}
				else
					appendStringInfoChar(&s, '0');
				r->p = end;
				if (exponent != 0)
					appendStringInfo(&s, "E" INT64_FORMAT, exponent);
				return emit_scalar(r, mode, "N", s.data, s.len);
			}
		case 8:					/* string */
			if (!value_length(r, l, &len))
				return false;
			if (!pg_verifymbstr((const char *) r->p, (int) len, true))
				return bin_fail(r, "The binary Ion value has a string that is not UTF-8");
			appendBinaryStringInfo(&s, (const char *) r->p, (int) len);
			r->p += len;
			return emit_scalar(r, mode, "S", s.data, s.len);
		case 10:				/* blob: base64 of its bytes */
			{
				int			blen;

				if (!value_length(r, l, &len))
					return false;
				blen = pg_b64_enc_len((int) len);
				enlargeStringInfo(&s, blen + 1);
				blen = pg_b64_encode(r->p, (int) len, s.data, blen);
				if (blen < 0)
					return bin_fail(r, "The binary Ion value has an invalid blob");
				s.len = blen;
				r->p += len;
				return emit_scalar(r, mode, "B", s.data, s.len);
			}
		case 11:				/* list */
		case 13:				/* struct */
			if (mode != BIN_TYPED)
				return bin_fail(r, "The binary Ion value has a set element that is not a string, number or blob");
			if (t == 13 && l == 1)
			{
				/* a struct with sorted fields: the length follows as a VarUInt */
				if (!read_varuint(&r->p, r->end, &len) || len > (uint64) (r->end - r->p))
					return bin_fail(r, "The binary Ion value is truncated");
			}
			else if (!value_length(r, l, &len))
				return false;
			begin_typed(r, t == 11 ? "L" : "M");
			pushJsonbValue(&r->st, t == 11 ? WJB_BEGIN_ARRAY : WJB_BEGIN_OBJECT, NULL);
			if (!read_members(r, len, t == 13, BIN_TYPED, depth))
				return false;
			pushJsonbValue(&r->st, t == 11 ? WJB_END_ARRAY : WJB_END_OBJECT, NULL);
			pushJsonbValue(&r->st, WJB_END_OBJECT, NULL);
			return true;
		case 6:
			return bin_fail(r, "The Ion text has an invalid number or an unsupported value (timestamp)");
		case 7:
			return bin_fail(r, "The Ion text has a symbol value, which DynamoDB does not use");
		case 9:
			return bin_fail(r, "The Ion text has a clob, which DynamoDB does not use");
		case 12:
			return bin_fail(r, "The Ion text has an s-expression, which DynamoDB does not use");
		default:
			return bin_fail(r, "The binary Ion value has an invalid type");
	}
}

/* Read a local symbol table struct's "symbols" list into the symbol list. */
static bool
read_symbol_table(BinReader *r, uint64 len, DynIonBinSymbols *syms)
{
	const unsigned char *end = r->p + len;

	syms->n = 0;				/* a new local table replaces the previous one */
	while (r->p < end)
	{
		uint64		sid;
		int			t;
		int			l;
		uint64		vlen;

		if (!read_varuint(&r->p, end, &sid) || r->p >= end)
			return bin_fail(r, "The binary Ion symbol table is truncated");
		t = *r->p >> 4;
		l = *r->p & 0x0F;
		r->p++;
		if (t == 13 && l == 1)
		{
			if (!read_varuint(&r->p, end, &vlen))
				return bin_fail(r, "The binary Ion symbol table is truncated");
		}
		else if (l == 15)
			vlen = 0;
		else if (!value_length(r, l, &vlen))
			return false;
		if (vlen > (uint64) (end - r->p))
			return bin_fail(r, "The binary Ion symbol table is truncated");
		if (sid == 6 && t == 7 && vlen > 0)
		{
			/* imports: $ion_symbol_table (append to the current table) is the only one we can follow */
			uint64		s = 0;

			for (uint64 i = 0; i < vlen; i++)
				s = (s << 8) | r->p[i];
			if (s != 3)
				return bin_fail(r, "The binary Ion value imports a shared symbol table");
		}
		else if (sid == 6 && t != 15 && l != 15)
			return bin_fail(r, "The binary Ion value imports a shared symbol table");
		if (sid == 7 && t == 11)
		{
			const unsigned char *lend = r->p + vlen;

			while (r->p < lend)
			{
				int			et = *r->p >> 4;
				int			el = *r->p & 0x0F;
				uint64		elen;

				r->p++;
				if (el == 15)
					elen = 0;
				else if (!value_length(r, el, &elen))
					return false;
				if (syms->n == syms->cap)
				{
					syms->cap = Max(16, syms->cap * 2);
					syms->names = syms->names ? repalloc(syms->names, sizeof(char *) * syms->cap)
						: palloc(sizeof(char *) * syms->cap);
				}
				syms->names[syms->n++] = (et == 8 && el != 15) ? pnstrdup((const char *) r->p, (int) elen) : NULL;
				r->p += elen;
			}
		}
		else
			r->p += vlen;
	}
	return true;
}

/*
 * Read one top-level binary Ion value: version markers and local symbol
 * tables are taken in; a struct {Item: {...}} gives the item.  *eof at the
 * end; NULL and *error for a malformed value.
 */
Jsonb *
DynIonBinReadItem(DynIonGetc get, void *arg, DynIonBinSymbols *syms, bool *eof, const char **error)
{
	StringInfoData buf;
	BinReader	r;

	*eof = false;
	*error = NULL;
	initStringInfo(&buf);
	for (;;)
	{
		int			c = get(arg);
		int			t;
		int			l;
		uint64		len = 0;
		int			lenbytes = 0;
		unsigned char hdr[10];

		if (c < 0)
		{
			*eof = true;
			return NULL;
		}
		if (c == 0xE0)
		{
			/* version marker E0 01 00 EA: the symbol table starts again */
			if (get(arg) != 0x01 || get(arg) != 0x00 || get(arg) != 0xEA)
			{
				*error = "The binary Ion version marker is not Ion 1.0";
				return NULL;
			}
			syms->n = 0;
			continue;
		}
		t = c >> 4;
		l = c & 0x0F;
		if (l == 14 || (t == 13 && l == 1))
		{
			/* a VarUInt length follows */
			do
			{
				int			b = get(arg);

				if (b < 0 || lenbytes == 9)
				{
					*error = "The binary Ion value is truncated";
					return NULL;
				}
				hdr[lenbytes++] = (unsigned char) b;
				len = (len << 7) | (b & 0x7F);
				if (b & 0x80)
					break;
			} while (true);
		}
		else if (l != 15)
			len = l;
		if (len > DYN_IMPORT_MAX_RECORD)
		{
			*error = "The Ion value is larger than the maximum record size";
			return NULL;
		}
		/* the whole value: header and body */
		resetStringInfo(&buf);
		appendStringInfoChar(&buf, (char) c);
		appendBinaryStringInfo(&buf, (char *) hdr, lenbytes);
		for (uint64 i = 0; i < len; i++)
		{
			int			b = get(arg);

			if (b < 0)
			{
				*error = "The binary Ion value is truncated";
				return NULL;
			}
			appendStringInfoChar(&buf, (char) b);
		}
		memset(&r, 0, sizeof(r));
		r.p = (const unsigned char *) buf.data + 1 + lenbytes;
		r.end = (const unsigned char *) buf.data + buf.len;
		r.symbols = syms;
		if (t == 0)
			continue;			/* NOP pad */
		if (t == 14)
		{
			/* an annotated top-level value: a local symbol table, or refused */
			uint64		alen;
			uint64		sid;
			const unsigned char *p = r.p;

			if (!read_varuint(&p, r.end, &alen) || !read_varuint(&p, r.end, &sid))
			{
				*error = "The binary Ion value is truncated";
				return NULL;
			}
			if (sid == 3 && p < r.end && (*p >> 4) == 13)
			{
				int			sl = *p & 0x0F;
				uint64		slen;

				r.p = p + 1;
				if ((sl == 1 && !read_varuint(&r.p, r.end, &slen)) || (sl != 1 && !value_length(&r, sl, &slen)) ||
					!read_symbol_table(&r, slen, syms))
				{
					*error = r.error ? r.error : "The binary Ion symbol table is truncated";
					return NULL;
				}
				continue;
			}
			*error = "The binary Ion value is not a struct {Item: {...}}";
			return NULL;
		}
		if (t != 13 || l == 15)
		{
			*error = "The binary Ion value is not a struct {Item: {...}}";
			return NULL;
		}
		/* {Item: {...}}: one field named Item whose value is a struct */
		{
			uint64		sid;
			const char *name;
			JsonbValue *res = NULL;
			int			it;
			int			il;
			uint64		ilen;

			while (r.p < r.end)
			{
				if (!read_varuint(&r.p, r.end, &sid) || r.p >= r.end)
				{
					*error = "The binary Ion value is truncated";
					return NULL;
				}
				name = symbol_text(&r, sid);
				it = *r.p >> 4;
				il = *r.p & 0x0F;
				r.p++;
				if (name == NULL || strcmp(name, "Item") != 0 || it != 13 || il == 15 || res != NULL)
				{
					*error = "The binary Ion value is not a struct {Item: {...}}";
					return NULL;
				}
				if (il == 1)
				{
					if (!read_varuint(&r.p, r.end, &ilen) || ilen > (uint64) (r.end - r.p))
					{
						*error = "The binary Ion value is truncated";
						return NULL;
					}
				}
				else if (!value_length(&r, il, &ilen))
				{
					*error = r.error;
					return NULL;
				}
				pushJsonbValue(&r.st, WJB_BEGIN_OBJECT, NULL);
				if (!read_members(&r, ilen, true, BIN_TYPED, 1))
				{
					*error = r.error;
					return NULL;
				}
				res = pushJsonbValue(&r.st, WJB_END_OBJECT, NULL);
			}
			if (res == NULL)
			{
				*error = "The Ion value has no Item";
				return NULL;
			}
			return JsonbValueToJsonb(res);
		}
	}
}
