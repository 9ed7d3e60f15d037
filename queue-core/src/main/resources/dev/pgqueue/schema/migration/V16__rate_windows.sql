-- Rate limits: at most N job starts in any window of one period, held across every instance.
--
-- One row per limit. The period is cut into 50 sub-windows, and the row keeps how many starts each of
-- the last 51 was granted, in a ring indexed by the sub-window's number (microseconds since the epoch
-- divided by the sub-window's length) modulo 51. Any window of one period overlaps at most 51
-- consecutive sub-windows, so a grant is made only while the ring's sum stays within N: no window of
-- one period ever holds more than N starts, and under a backlog the limit runs at 50/51 of N or better.
-- (A token bucket would need a burst of 1 to promise as much; a fixed window lets 2N through across a
-- boundary; a log of every start grows with the rate.)
--
-- A start's instant is the instant of its grant, read from the server's clock after the row's lock is
-- granted, so grants follow the order in which claims took the lock, whatever their sessions' clocks.
-- The row is locked only for the one short statement that reserves or gives back: claims never hold
-- it while they read the jobs table.
CREATE TABLE pgqueue_rate_windows (
    name      text      PRIMARY KEY,
    period_us bigint    NOT NULL,
    head      bigint    NOT NULL,
    counts    integer[] NOT NULL
) WITH (fillfactor = 50);

-- Reserves up to p_wanted units of limit p_name (p_limit units per p_period_us microseconds), and
-- p_ahead more for the caller's next claim if the window stays less than half used with them: returns
-- how many it granted, the instant of the grant (the start instant of the jobs it lets start), and,
-- when it granted fewer than wanted, the instant the next unit frees. A limit whose period changed
-- starts afresh.
CREATE FUNCTION pgqueue_rate_reserve(p_name text, p_limit integer, p_period_us bigint, p_wanted integer,
                                     p_ahead integer,
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
    SELECT * INTO w FROM pgqueue_rate_windows WHERE name = p_name FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO pgqueue_rate_windows (name, period_us, head, counts)
        VALUES (p_name, p_period_us, 0, array_fill(0, ARRAY[slots]))
        ON CONFLICT (name) DO NOTHING;
        SELECT * INTO w FROM pgqueue_rate_windows WHERE name = p_name FOR UPDATE;
    END IF;
    IF w.period_us <> p_period_us THEN
        w.period_us := p_period_us;
        w.head := 0;
        w.counts := array_fill(0, ARRAY[slots]);
    END IF;
    -- Read after the lock is granted: a clock read before the wait would date grants out of order.
    granted_at := clock_timestamp();
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
        -- The oldest sub-window with starts leaves the ring when sub-window (its number + 51) begins.
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

-- Gives back units granted at p_granted_at that no job used, while their sub-window is still in the
-- ring; a unit given back after that has already expired.
CREATE FUNCTION pgqueue_rate_give_back(p_name text, p_units integer, p_granted_at timestamptz) RETURNS void
    LANGUAGE sql
    SET search_path FROM CURRENT
AS $$
    UPDATE pgqueue_rate_windows w
    SET counts[((g.sub % 51) + 1)::integer] = greatest(0, w.counts[((g.sub % 51) + 1)::integer] - p_units)
    FROM (SELECT floor(extract(epoch FROM p_granted_at) * 1000000)::bigint / greatest(period_us / 50, 1) AS sub
          FROM pgqueue_rate_windows WHERE name = p_name) g
    WHERE w.name = p_name AND p_units > 0 AND g.sub <= w.head AND w.head - g.sub < 51;
$$;
