-- dynindex 0.1 -> 0.2: every schema change of release 0.2.
-- CREATE EXTENSION dynindex runs dynindex--0.1.sql (frozen: 0.1 is released) and then
-- this script; ALTER EXTENSION dynindex UPDATE runs this script on a 0.1 database.
-- Each feature keeps its own section below (parallel work edits only its own).
\echo Use "ALTER EXTENSION dynindex UPDATE TO '0.2'" to load this file. \quit

-- == streams ==

-- == partiql ==

-- == backups ==

-- == security ==

-- == metrics ==

-- == fidelity ==

-- == scaling ==
