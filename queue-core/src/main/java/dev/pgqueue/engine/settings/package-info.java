/**
 * Internal: the engine's settings, one record per concern (a queue's, every worker's, the background
 * services', the in-doubt resolver's), each holding its defaults and validating its values with
 * messages that name the setting as written in {@code application.yml}. May change in any release.
 */
@NullMarked
package dev.pgqueue.engine.settings;

import org.jspecify.annotations.NullMarked;
