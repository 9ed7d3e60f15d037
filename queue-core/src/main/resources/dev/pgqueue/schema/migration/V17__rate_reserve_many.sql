-- Rate limits that depend on the job (per kind, per concurrency key, weights): one claim reserves
-- units of several limits at once, and the jobs it starts record one start instant. So every limit
-- of the claim books its units at that same instant: the rows are locked first, in the order of their
-- names (two claims over overlapping limits never wait on each other in a cycle), then the clock is
-- read once, then each limit grants what it can.
--
-- The booking itself moves into pgqueue_rate_book, which pgqueue_rate_reserve (one limit) now calls
-- too; what a limit grants is unchanged.

-- Books up to p_wanted units of limit p_name (p_limit units per p_period_us microseconds) at instant
-- p_at, and p_ahead more if the window stays less than half used with them. The caller holds the
-- row's lock and read p_at after taking it. Returns the units granted, the instant they were booked
-- at, and, when fewer than wanted, the instant the next unit frees.
CREATE FUNCTION pgqueue_rate_book(p_name text, p_limit integer, p_period_us bigint, p_wanted integer,
                                  p_ahead integer, p_at timestamptz,
                                  OUT granted integer, OUT granted_at timestamptz, OUT free_at timestamptz)
    LANGUAGE plpgsql
    SET search_path FROM CURRENT
AS $$
DECLARE
    slots   constant integer := 51;
    width   bigint := greatest(p_period_us / 50, 1);
    w       pgqueue_rate_windows%ROWTYPE;
    current bigint;
    used    integer := 0;
    k       bigint;
BEGIN
    SELECT * INTO w FROM pgqueue_rate_windows WHERE name = p_name;
    IF w.period_us <> p_period_us THEN
        w.period_us := p_period_us;
        w.head := 0;
        w.counts := array_fill(0, ARRAY[slots]);
    END IF;
    granted_at := p_at;
    current := floor(extract(epoch FROM granted_at) * 1000000)::bigint / width;
    IF current < w.head THEN
        -- The server's clock stepped back: count in the latest sub-window, never in one already closed.
        current := w.head;
        granted_at := to_timestamp((w.head * width)::double precision / 1000000);
    ELSIF current - w.head >= slots THEN
        w.counts := array_fill(0, ARRAY[slots]);
    ELSE
        k := w.head + 1;
        WHILE k <= current LOOP
            w.counts[(k % slots) + 1] := 0;
            k := k + 1;
        END LOOP;
    END IF;
    SELECT coalesce(sum(c), 0) INTO used FROM unnest(w.counts) AS c;
    granted := greatest(0, least(p_wanted, p_limit - used));
    IF granted = p_wanted AND p_ahead > 0 AND p_limit - used - granted - p_ahead >= p_limit / 2 THEN
        granted := granted + p_ahead;
    END IF;
    w.counts[(current % slots) + 1] := w.counts[(current % slots) + 1] + granted;
    UPDATE pgqueue_rate_windows SET period_us = w.period_us, head = current, counts = w.counts WHERE name = p_name;
    IF granted < p_wanted THEN
        -- The oldest sub-window with units leaves the ring when sub-window (its number + 51) begins.
        k := current - slots + 1;
        WHILE k <= current LOOP
            IF w.counts[(k % slots) + 1] > 0 THEN
                free_at := to_timestamp(((k + slots) * width)::double precision / 1000000);
                EXIT;
            END IF;
            k := k + 1;
        END LOOP;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION pgqueue_rate_reserve(p_name text, p_limit integer, p_period_us bigint, p_wanted integer,
                                                p_ahead integer,
                                                OUT granted integer, OUT granted_at timestamptz, OUT free_at timestamptz)
    LANGUAGE plpgsql
    SET search_path FROM CURRENT
AS $$
BEGIN
    PERFORM 1 FROM pgqueue_rate_windows WHERE name = p_name FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO pgqueue_rate_windows (name, period_us, head, counts)
        VALUES (p_name, p_period_us, 0, array_fill(0, ARRAY[51]))
        ON CONFLICT (name) DO NOTHING;
        PERFORM 1 FROM pgqueue_rate_windows WHERE name = p_name FOR UPDATE;
    END IF;
    -- Read after the lock is granted: a clock read before the wait would date grants out of order.
    SELECT b.granted, b.granted_at, b.free_at INTO granted, granted_at, free_at
    FROM pgqueue_rate_book(p_name, p_limit, p_period_us, p_wanted, p_ahead, clock_timestamp()) b;
END
$$;

-- Reserves units of several limits at once, all booked at one instant read after every row is locked.
-- p_names must not repeat a name.
CREATE FUNCTION pgqueue_rate_reserve_all(p_names text[], p_limits integer[], p_periods_us bigint[],
                                         p_wanted integer[])
    RETURNS TABLE (name text, granted integer, granted_at timestamptz, free_at timestamptz)
    LANGUAGE plpgsql
    SET search_path FROM CURRENT
AS $$
DECLARE
    at timestamptz;
    i  integer;
BEGIN
    INSERT INTO pgqueue_rate_windows (name, period_us, head, counts)
    SELECT u.n, u.p, 0, array_fill(0, ARRAY[51])
    FROM unnest(p_names, p_periods_us) AS u(n, p)
    WHERE NOT EXISTS (SELECT 1 FROM pgqueue_rate_windows x WHERE x.name = u.n)
    ORDER BY u.n
    ON CONFLICT ON CONSTRAINT pgqueue_rate_windows_pkey DO NOTHING;
    PERFORM 1 FROM pgqueue_rate_windows x WHERE x.name = ANY(p_names) ORDER BY x.name FOR UPDATE;
    at := clock_timestamp();
    FOR i IN 1 .. coalesce(array_length(p_names, 1), 0) LOOP
        name := p_names[i];
        SELECT b.granted, b.granted_at, b.free_at INTO granted, granted_at, free_at
        FROM pgqueue_rate_book(p_names[i], p_limits[i], p_periods_us[i], p_wanted[i], 0, at) b;
        RETURN NEXT;
    END LOOP;
END
$$;
