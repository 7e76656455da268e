import { Injectable, type OnModuleInit } from '@nestjs/common';
import { REPLICA_STATES } from '../database/replica-lag';
import { ReplicaReads } from '../database/replica-reads.service';
import { MetricsService } from '../metrics/metrics.service';

/**
 * The finance reads' replica for alerts: its state (one series per state, 1 for the current one)
 * and its staleness at most. Read from this instance's last background check at each scrape:
 * nothing is asked of the database.
 */
@Injectable()
export class ReplicaMetrics implements OnModuleInit {
  constructor(
    private readonly replica: ReplicaReads,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit() {
    this.metrics.gaugeCollectedOnScrape(
      'database_replica_state',
      'The finance reads replica (DATABASE_REPLICA_URL) as this instance sees it: 1 for its state (disabled, ok, lagging, unreachable), 0 for the others',
      ['state'],
      () => {
        const { state } = this.replica.status();
        return Promise.resolve(REPLICA_STATES.map((each) => ({ labels: { state: each }, value: each === state ? 1 : 0 })));
      },
    );
    this.metrics.gaugeCollectedOnScrape(
      'database_replica_lag_seconds',
      'How far behind the primary the finance reads replica may be at most, in seconds, labelled with its state (ok, lagging); no series when disabled, unreachable or not known',
      // Labelled so that an unknown lag has no series at all: a gauge without labels would show 0.
      ['state'],
      () => {
        const { state, lagSeconds } = this.replica.status();
        return Promise.resolve(lagSeconds === null ? [] : [{ labels: { state }, value: lagSeconds }]);
      },
    );
  }
}
