/*
 * types.c — AttributeValue type names.
 */
#include "postgres.h"

#include "types/types.h"

static const char *const type_names[DYN_NTYPES] = {
	[DYN_S] = "S",[DYN_N] = "N",[DYN_B] = "B",[DYN_BOOL] = "BOOL",[DYN_NULL] = "NULL",
	[DYN_M] = "M",[DYN_L] = "L",[DYN_SS] = "SS",[DYN_NS] = "NS",[DYN_BS] = "BS"
};

/* DynamoDB's name of a type. */
const char *
DynTypeName(DynType t)
{
	Assert(t >= 0 && t < DYN_NTYPES);
	return type_names[t];
}

/* Look a type up by its name. */
bool
DynTypeFromName(const char *name, int len, DynType *t)
{
	int			i;

	for (i = 0; i < DYN_NTYPES; i++)
	{
		if ((int) strlen(type_names[i]) == len && memcmp(type_names[i], name, len) == 0)
		{
			*t = (DynType) i;
			return true;
		}
	}
	return false;
}

/* Is this a type a key attribute may have? */
bool
DynTypeIsScalarKey(DynType t)
{
	return t == DYN_S || t == DYN_N || t == DYN_B;
}

/* Is this a set type? */
bool
DynTypeIsSet(DynType t)
{
	return t == DYN_SS || t == DYN_NS || t == DYN_BS;
}
