/*
 * number.c — DynamoDB numbers: parsing, canonical form, comparison,
 * arithmetic and size.
 *
 * A number is held as sign, significant digits (no leading or trailing
 * zeros) and the decimal exponent of the first digit: value =
 * d1.d2d3... x 10^exp.  DynamoDB allows 38 significant digits and
 * exponents -130 .. 125; its canonical text is plain decimal notation
 * (1.5E2 reads back as 150, -0 as 0, 00042 as 42).
 */
#include "postgres.h"

#include "types/types.h"

#define NUM_MAX_EXP		125
#define NUM_MIN_EXP		(-130)
/* Arithmetic intermediates: two 38-digit numbers 255 places apart, plus carry. */
#define NUM_WORK_DIGITS	(DYN_MAX_NUMBER_DIGITS * 2 + 260)

typedef struct DecNum
{
	bool		neg;
	int			ndigits;		/* 0 means zero */
	int			exp;			/* exponent of digits[0] */
	char		digits[NUM_WORK_DIGITS];	/* values 0..9 */
} DecNum;

/* Parse number text into a DecNum; false if it is not a number. */
static bool
parse_decimal(const char *s, int len, DecNum *num, bool *too_many_digits)
{
	int			i = 0;
	int			intdigits = 0;
	int			total = 0;
	bool		seen_digit = false;
	bool		seen_nonzero = false;
	int			first_nonzero_pos = 0;	/* position among all mantissa digits */
	long		exponent = 0;
	int			lastnz = -1;

	*too_many_digits = false;
	num->neg = false;
	num->ndigits = 0;
	num->exp = 0;

	if (i < len && (s[i] == '+' || s[i] == '-'))
		num->neg = (s[i++] == '-');

	/* integer part */
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
	{
		seen_digit = true;
		if (s[i] != '0' || seen_nonzero)
		{
			if (!seen_nonzero)
				first_nonzero_pos = total;
			seen_nonzero = true;
			if (num->ndigits < NUM_WORK_DIGITS)
				num->digits[num->ndigits] = s[i] - '0';
			if (s[i] != '0')
				lastnz = num->ndigits;
			num->ndigits++;
		}
		intdigits++;
		total++;
	}
	if (i < len && s[i] == '.')
	{
		i++;
		for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		{
			seen_digit = true;
			if (s[i] != '0' || seen_nonzero)
			{
				if (!seen_nonzero)
					first_nonzero_pos = total;
				seen_nonzero = true;
				if (num->ndigits < NUM_WORK_DIGITS)
					num->digits[num->ndigits] = s[i] - '0';
				if (s[i] != '0')
					lastnz = num->ndigits;
				num->ndigits++;
			}
			total++;
		}
	}
	if (!seen_digit)
		return false;
	if (i < len && (s[i] == 'e' || s[i] == 'E'))
	{
		bool		eneg = false;
		bool		edigit = false;

		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			eneg = (s[i++] == '-');
		for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		{
			edigit = true;
			if (exponent < 100000000)
				exponent = exponent * 10 + (s[i] - '0');
		}
		if (!edigit)
			return false;
		if (eneg)
			exponent = -exponent;
	}
	if (i != len)
		return false;

	if (!seen_nonzero)
	{
		num->ndigits = 0;
		num->neg = false;
		return true;
	}
	/* trim trailing zeros */
	num->ndigits = lastnz + 1;
	if (num->ndigits > DYN_MAX_NUMBER_DIGITS)
		*too_many_digits = true;
	if (num->ndigits > NUM_WORK_DIGITS)
		num->ndigits = NUM_WORK_DIGITS;
	/* the first significant digit stands at 10^(intdigits - 1 - first_nonzero_pos) */
	{
		long		e = (long) intdigits - 1 - first_nonzero_pos + exponent;

		if (e > 100000000)
			e = 100000000;
		if (e < -100000000)
			e = -100000000;
		num->exp = (int) e;
	}
	return true;
}

/* Render a DecNum as canonical text. */
static char *
format_decimal(const DecNum *num)
{
	StringInfoData buf;
	int			i;

	if (num->ndigits == 0)
		return pstrdup("0");
	initStringInfo(&buf);
	if (num->neg)
		appendStringInfoChar(&buf, '-');
	if (num->exp < 0)
	{
		appendStringInfoString(&buf, "0.");
		for (i = 0; i < -num->exp - 1; i++)
			appendStringInfoChar(&buf, '0');
		for (i = 0; i < num->ndigits; i++)
			appendStringInfoChar(&buf, '0' + num->digits[i]);
	}
	else
	{
		for (i = 0; i <= num->exp || i < num->ndigits; i++)
		{
			if (i == num->exp + 1)
				appendStringInfoChar(&buf, '.');
			appendStringInfoChar(&buf, i < num->ndigits ? '0' + num->digits[i] : '0');
		}
	}
	return buf.data;
}

/* Check DynamoDB's limits; returns a message or NULL. */
static const char *
check_limits(const DecNum *num)
{
	if (num->ndigits == 0)
		return NULL;
	if (num->exp > NUM_MAX_EXP)
		return "Number overflow. Attempting to store a number with magnitude larger than supported range";
	if (num->exp < NUM_MIN_EXP)
		return "Number underflow. Attempting to store a number with magnitude smaller than supported range";
	if (num->ndigits > DYN_MAX_NUMBER_DIGITS)
		return "Attempting to store more than 38 significant digits in a Number";
	return NULL;
}

/* Canonicalize number text; NULL on success, else DynamoDB's message. */
const char *
DynNumberCanonicalize(const char *text, int len, char **result)
{
	DecNum		num;
	bool		too_many;
	const char *msg;

	if (len == 0)
		return "The parameter cannot be converted to a numeric value";
	if (!parse_decimal(text, len, &num, &too_many))
		return psprintf("The parameter cannot be converted to a numeric value: %.*s", len, text);
	msg = check_limits(&num);
	if (msg == NULL && too_many)
		msg = "Attempting to store more than 38 significant digits in a Number";
	if (msg)
		return msg;
	*result = format_decimal(&num);
	return NULL;
}

/* Parse canonical text (known valid). */
static void
parse_canonical(const char *s, int len, DecNum *num)
{
	bool		too_many;

	if (!parse_decimal(s, len, num, &too_many))
		elog(ERROR, "invalid canonical number \"%.*s\"", len, s);
}

/* Compare magnitudes of two nonzero numbers. */
static int
compare_magnitude(const DecNum *a, const DecNum *b)
{
	int			i;

	if (a->exp != b->exp)
		return a->exp > b->exp ? 1 : -1;
	for (i = 0; i < a->ndigits && i < b->ndigits; i++)
		if (a->digits[i] != b->digits[i])
			return a->digits[i] > b->digits[i] ? 1 : -1;
	if (a->ndigits != b->ndigits)
		return a->ndigits > b->ndigits ? 1 : -1;
	return 0;
}

/* Compare two DecNums numerically. */
static int
compare_decimal(const DecNum *a, const DecNum *b)
{
	int			sa = a->ndigits == 0 ? 0 : (a->neg ? -1 : 1);
	int			sb = b->ndigits == 0 ? 0 : (b->neg ? -1 : 1);

	if (sa != sb)
		return sa > sb ? 1 : -1;
	if (sa == 0)
		return 0;
	return sa * compare_magnitude(a, b);
}

/* Compare two canonical numbers numerically. */
int
DynNumberCompare(const char *a, int alen, const char *b, int blen)
{
	DecNum		x;
	DecNum		y;

	if (alen == blen && memcmp(a, b, alen) == 0)
		return 0;
	parse_canonical(a, alen, &x);
	parse_canonical(b, blen, &y);
	return compare_decimal(&x, &y);
}

/* a + b or a - b; NULL on success, else DynamoDB's message. */
const char *
DynNumberAdd(const char *a, int alen, const char *b, int blen, bool subtract, char **result)
{
	DecNum		x;
	DecNum		y;
	DecNum		r;
	int			hi;
	int			lo;
	int			width;
	int			i;
	int		   *acc;
	const char *msg;

	parse_canonical(a, alen, &x);
	parse_canonical(b, blen, &y);
	if (subtract)
		y.neg = !y.neg;
	if (y.ndigits == 0)
	{
		*result = format_decimal(&x);
		return NULL;
	}
	if (x.ndigits == 0)
	{
		if (y.ndigits == 0)
			y.neg = false;
		*result = format_decimal(&y);
		return NULL;
	}

	/* positions: digit k of x stands at 10^(x.exp - k) */
	hi = Max(x.exp, y.exp) + 1;	/* room for a carry */
	lo = Min(x.exp - x.ndigits + 1, y.exp - y.ndigits + 1);
	width = hi - lo + 1;
	acc = palloc0(sizeof(int) * width);

	/* index j holds 10^(hi - j) */
	if (x.neg == y.neg)
	{
		for (i = 0; i < x.ndigits; i++)
			acc[hi - (x.exp - i)] += x.digits[i];
		for (i = 0; i < y.ndigits; i++)
			acc[hi - (y.exp - i)] += y.digits[i];
		r.neg = x.neg;
	}
	else
	{
		const DecNum *big = &x;
		const DecNum *small = &y;
		int			c = compare_magnitude(&x, &y);

		if (c == 0)
		{
			*result = pstrdup("0");
			pfree(acc);
			return NULL;
		}
		if (c < 0)
		{
			big = &y;
			small = &x;
		}
		for (i = 0; i < big->ndigits; i++)
			acc[hi - (big->exp - i)] += big->digits[i];
		for (i = 0; i < small->ndigits; i++)
			acc[hi - (small->exp - i)] -= small->digits[i];
		r.neg = big->neg;
	}
	/* normalize carries/borrows from the least significant end */
	for (i = width - 1; i > 0; i--)
	{
		while (acc[i] < 0)
		{
			acc[i] += 10;
			acc[i - 1] -= 1;
		}
		while (acc[i] > 9)
		{
			acc[i] -= 10;
			acc[i - 1] += 1;
		}
	}
	/* collect significant digits */
	{
		int			first = 0;
		int			last = width - 1;

		while (first < width && acc[first] == 0)
			first++;
		while (last > first && acc[last] == 0)
			last--;
		Assert(first < width);
		r.exp = hi - first;
		r.ndigits = 0;
		for (i = first; i <= last; i++)
		{
			if (r.ndigits < NUM_WORK_DIGITS)
				r.digits[r.ndigits] = acc[i];
			r.ndigits++;
		}
		if (r.ndigits > NUM_WORK_DIGITS)
			r.ndigits = NUM_WORK_DIGITS;
	}
	pfree(acc);
	msg = check_limits(&r);
	/* DynamoDB reports a sum needing more than 38 digits as an overflow */
	if (msg && r.exp <= NUM_MAX_EXP && r.exp >= NUM_MIN_EXP)
		msg = "Number overflow. Attempting to store a number with magnitude larger than supported range";
	if (msg)
		return msg;
	*result = format_decimal(&r);
	return NULL;
}

/*
 * DynamoDB's size of a number: one byte plus one per pair of significant
 * digits (pairs aligned on the decimal point), plus one if negative.
 */
int
DynNumberSize(const char *canon, int len)
{
	DecNum		num;
	int			low;

	parse_canonical(canon, len, &num);
	if (num.ndigits == 0)
		return 1;
	low = num.exp - num.ndigits + 1;
	/* floor division by 2 for possibly negative positions */
	return 1 + ((num.exp >= 0 ? num.exp / 2 : -((1 - num.exp) / 2)) -
				(low >= 0 ? low / 2 : -((1 - low) / 2)) + 1) + (num.neg ? 1 : 0);
}

/*
 * Append the order-preserving encoding of a canonical number (keyenc.c):
 * 0x02 for zero; 0x03, exponent byte, base-100 digit bytes (1..100) and a
 * 0x00 terminator for positives; 0x01 and the bitwise complement of the
 * positive form for negatives.  Self-delimiting.
 */
void
DynNumberEncodeKey(StringInfo buf, const char *canon, int len)
{
	DecNum		num;
	int			i;
	unsigned char mask;

	parse_canonical(canon, len, &num);
	if (num.ndigits == 0)
	{
		appendStringInfoCharMacro(buf, 0x02);
		return;
	}
	mask = num.neg ? 0xFF : 0x00;
	appendStringInfoCharMacro(buf, num.neg ? 0x01 : 0x03);
	appendStringInfoCharMacro(buf, (char) ((unsigned char) (num.exp - NUM_MIN_EXP) ^ mask));
	for (i = 0; i < num.ndigits; i += 2)
	{
		int			pair = num.digits[i] * 10 + (i + 1 < num.ndigits ? num.digits[i + 1] : 0);

		appendStringInfoCharMacro(buf, (char) ((unsigned char) (pair + 1) ^ mask));
	}
	appendStringInfoCharMacro(buf, (char) (0x00 ^ mask));
}
