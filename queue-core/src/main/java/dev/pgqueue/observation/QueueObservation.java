package dev.pgqueue.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/** The observations pgqueue makes, with the key values of their default conventions. */
public enum QueueObservation implements ObservationDocumentation {

	/**
	 * An enqueue: one {@code JobClient.enqueue}, or one {@code enqueueAll} with all its jobs. A
	 * producer span whose trace context is stored with the jobs.
	 */
	ENQUEUE {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultEnqueueObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return new KeyName[] { JobKeyNames.QUEUE, JobKeyNames.KIND, JobKeyNames.MODE };
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return new KeyName[] { JobKeyNames.JOB_ID, JobKeyNames.JOB_COUNT };
		}

	},

	/**
	 * One attempt of a job: its listener's run, in the scope of which the listener's own spans and
	 * logs are made. A consumer span whose parent is the enqueue's span, when the enqueue was traced.
	 */
	PROCESS {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultJobProcessingObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return new KeyName[] { JobKeyNames.QUEUE, JobKeyNames.KIND, JobKeyNames.MODE, JobKeyNames.OUTCOME };
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return new KeyName[] { JobKeyNames.JOB_ID, JobKeyNames.ATTEMPT };
		}

	};

	/** Value of a low-cardinality key that an {@code enqueueAll} spanning several values has. */
	public static final String SEVERAL = "several";

	/** The keys of pgqueue's observations, named like the tags of its metrics. */
	public enum JobKeyNames implements KeyName {

		/** The job's queue. */
		QUEUE {
			@Override
			public String asString() {
				return "queue";
			}
		},

		/** The job's kind. */
		KIND {
			@Override
			public String asString() {
				return "kind";
			}
		},

		/** The queue's mode: {@code transactional} or {@code leased}. */
		MODE {
			@Override
			public String asString() {
				return "mode";
			}
		},

		/** What became of the attempt: {@code completed}, {@code retried} or {@code failed}. */
		OUTCOME {
			@Override
			public String asString() {
				return "outcome";
			}
		},

		/** The job's public id (an enqueue of one job). */
		JOB_ID {
			@Override
			public String asString() {
				return "job.id";
			}
		},

		/** How many jobs an enqueue inserted. */
		JOB_COUNT {
			@Override
			public String asString() {
				return "job.count";
			}
		},

		/** The number of the attempt, 1 on the first run. */
		ATTEMPT {
			@Override
			public String asString() {
				return "job.attempt";
			}
		}

	}

}
